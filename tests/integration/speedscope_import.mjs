// node speedscope_import.mjs <dir> <chromium> <folded file> <out.json>
//
// <dir> holds node_modules/speedscope and node_modules/playwright-core (npm install there).
//
// Opens speedscope (its npm package's own web app, in headless Chromium through playwright-core)
// on a folded-stack file exactly as `speedscope <file>` does (index.html#localProfilePath= a script
// calling speedscope.loadFileFromBase64), then presses its Export button and writes the profile it
// imported, in speedscope's own file format, to <out.json>; prints the line speedscope logs naming
// the importer it chose ("Importing as collapsed stack format"). Exits 1 with a reason on stderr
// when speedscope shows an error or exports nothing. Used by output.tools (test_output.py).
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'

const [dir, browser, folded, out] = process.argv.slice(2)
const { chromium } = createRequire(path.join(path.resolve(dir), 'package.json'))('playwright-core')
const index = path.join(dir, 'node_modules', 'speedscope', 'dist', 'release', 'index.html')
const name = path.basename(folded)
const loader = path.join(path.dirname(out), `${name}.load.js`)
fs.writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(name)}, ${JSON.stringify(
  fs.readFileSync(folded).toString('base64'))})`)

const b = await chromium.launch({ executablePath: browser, args: ['--allow-file-access-from-files', '--no-sandbox'] })
try {
  const page = await b.newPage({ acceptDownloads: true })
  const errors = []
  page.on('pageerror', e => errors.push(String(e)))
  page.on('console', m => { if (m.text().startsWith('Importing as')) console.log(m.text()) })
  page.on('dialog', d => { errors.push(`dialog: ${d.message()}`); d.dismiss() })
  await page.goto(`file://${path.resolve(index)}#localProfilePath=${loader}`)
  // The toolbar shows the profile's name once it is imported.
  try {
    await page.getByText(name, { exact: false }).first().waitFor({ timeout: 30000 })
  } catch (e) {
    console.error(`speedscope did not show ${name}: ${errors.join('; ') || e.message}`)
    process.exit(1)
  }
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }),
                                        page.getByText('Export').click()])
  await download.saveAs(out)
  if (errors.length) {
    console.error(`speedscope: ${errors.join('; ')}`)
    process.exit(1)
  }
} finally {
  await b.close()
}
