// SPDX-License-Identifier: MIT
/*
 * vpmu-exit: end the VM with an exit status, as `vpmu run` reports it.
 * Usage: vpmu-exit [STATUS]  (0-255, default 0)
 *
 * Writes the status to vpmu's exit port, which needs port I/O rights
 * (root: ioperm). A kernel power-off cannot carry a status; it is the
 * fallback when the port is refused (another VMM).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/reboot.h>
#include <unistd.h>

#include <pvpmu/abi.h>

int main(int argc, char **argv)
{
	unsigned long status = 0;
	char *end            = NULL;

	if (argc > 1) {
		errno  = 0;
		status = strtoul(argv[1], &end, 10);
		if (errno || *end || status > 255) {
			fprintf(stderr, "vpmu-exit: %s: not a status 0-255\n",
				argv[1]);
			return 2;
		}
	}
	sync();
	if (ioperm(PVPMU_PORT_EXIT, 1, 1) == 0)
		outb((unsigned char)status, PVPMU_PORT_EXIT);
	else
		fprintf(stderr, "vpmu-exit: ioperm: %s; powering off\n",
			strerror(errno));
	reboot(RB_POWER_OFF);
	return 1;
}
