/* code_view.h - what the code map says of an address, as `ip2md` shows it (SOS ip2md style). */
#ifndef ADAC_CODE_VIEW_H
#define ADAC_CODE_VIEW_H

#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_code_info;
struct adac_out;

/* "MethodDesc: ...", the method's name, the kind of code, its start, header, debug info and
 * range section, one fact per line. */
void adac_code_info_print(struct adac_runtime *rt, uint64_t ip, const struct adac_code_info *ci, struct adac_out *out);
/* The same facts as {"ip2md": {...}}. */
int adac_code_info_print_json(struct adac_runtime *rt, uint64_t ip, const struct adac_code_info *ci,
                              struct adac_out *out, struct adac_error *err);

#endif
