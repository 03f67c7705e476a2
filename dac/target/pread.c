/* pread.c - reading a local file or process (/proc/<pid>/mem) whole: the one pread loop of the
 * backends (target_core.c, target_pid.c, the LLDB plugin's direct reads). */
#include <errno.h>
#include <unistd.h>

#include "target/target.h"

int64_t adac_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return done ? (int64_t)done : -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (int64_t)done;
}
