// SPDX-License-Identifier: MIT
/*
 * test_cli_program.c: the built `vpmu` program's flags and errors, run as
 * a child process with an empty runtime directory (no VM, no KVM):
 * --help on every command, `vpmu help CMD`, --version, and one clear line
 * with a non-zero exit for each bad input.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_program.h"
#include "vm_registry.h"

Test(cli_program, help_on_every_command)
{
	static const char *const cmds[] = {"run",    "events", "list", "stat",
					   "record", "report", "top"};
	struct vpmu_out r, h;
	char want[64];
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		vpmu_prog((const char *[]){cmds[i], "--help", NULL}, &r);
		cr_expect_eq(r.status, 0, "vpmu %s --help: %d", cmds[i],
			     r.status);
		snprintf(want, sizeof(want), "usage: vpmu %s ", cmds[i]);
		cr_expect(!strncmp(r.out, want, strlen(want)), "%s", r.out);
		cr_expect(strstr(r.out, "-h, --help") != NULL, "%s", cmds[i]);
		cr_expect_str_empty(r.err, "%s: %s", cmds[i], r.err);
		vpmu_prog((const char *[]){"help", cmds[i], NULL}, &h);
		cr_expect_eq(h.status, 0);
		cr_expect_str_eq(h.out, r.out, "vpmu help %s", cmds[i]);
		vpmu_prog((const char *[]){cmds[i], "-h", NULL}, &h);
		cr_expect_str_eq(h.out, r.out, "vpmu %s -h", cmds[i]);
	}
}

Test(cli_program, help_lists_every_command)
{
	struct vpmu_out r;

	vpmu_prog((const char *[]){"help", NULL}, &r);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "  stat ") && strstr(r.out, "  top ") &&
			  strstr(r.out, "  run ") && strstr(r.out, "  events "),
		  "%s", r.out);
	vpmu_prog((const char *[]){"--help", NULL}, &r);
	cr_expect_eq(r.status, 0);
	vpmu_prog((const char *[]){NULL}, &r);
	cr_expect_eq(r.status, 1, "no command: usage on stderr, status 1");
	cr_expect(strstr(r.err, "usage: vpmu") != NULL);
}

Test(cli_program, version)
{
	struct vpmu_out r;

	vpmu_prog((const char *[]){"--version", NULL}, &r);
	cr_expect_eq(r.status, 0);
	cr_expect(!strncmp(r.out, "vpmu ", 5) && strchr(r.out, '\n') &&
			  strlen(r.out) > 6,
		  "%s", r.out);
	vpmu_prog((const char *[]){"-V", NULL}, &r);
	cr_expect_eq(r.status, 0);
}

/* (argv) fails with status 1 and one stderr line containing (msg). */
static void expect_fail(const char *const *argv, const char *msg)
{
	struct vpmu_out r;

	vpmu_prog(argv, &r);
	cr_expect_eq(r.status, 1, "vpmu %s %s: status %d", argv[0],
		     argv[1] ? argv[1] : "", r.status);
	cr_expect(strstr(r.err, msg) != NULL, "'%s' not in '%s'", msg, r.err);
	cr_expect(strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
		  "one line: '%s'", r.err);
	cr_expect_str_empty(r.out, "%s", r.out);
}

Test(cli_program, each_error_is_one_line_and_status_1)
{
	expect_fail((const char *[]){"frob", NULL},
		    "vpmu: unknown command 'frob' (try 'vpmu help')");
	expect_fail((const char *[]){"help", "frob", NULL},
		    "unknown command 'frob'");
	expect_fail((const char *[]){"--frob", NULL},
		    "vpmu: unknown or ambiguous option '--frob'");
	expect_fail((const char *[]){"stat", "--frob", NULL},
		    "vpmu stat: unknown or ambiguous option '--frob' (try "
		    "'vpmu stat --help')");
	expect_fail((const char *[]){"stat", "-e", NULL},
		    "vpmu stat: option '-e/--event' needs a value");
	expect_fail((const char *[]){"stat", "-I", "0", NULL},
		    "-I/--interval-print needs a positive integer, not '0'");
	expect_fail((const char *[]){"stat", "--", "0", NULL},
		    "-- needs a positive number, not '0'");
	expect_fail((const char *[]){"stat", "-e", "nosuch", NULL},
		    "unknown event 'nosuch'");
	expect_fail((const char *[]){"stat", "-C", "2-1", NULL},
		    "not a vCPU list");
	expect_fail((const char *[]){"top", "-n", "0", NULL},
		    "vpmu top: -n/--iterations needs a positive integer");
	expect_fail((const char *[]){"top", "-d", "0", NULL},
		    "-d/--delay needs a positive number");
	expect_fail((const char *[]){"top", "extra", NULL},
		    "vpmu top: unexpected argument 'extra'");
	expect_fail((const char *[]){"record", "-c", "10", "-F", "10", NULL},
		    "-c and -F exclude each other");
	/* A rate above the hard maximum names the maximum. */
	expect_fail((const char *[]){"record", "-F", "2000000", NULL},
		    "vpmu record: -F 2000000: above the maximum sample rate "
		    "of 1000000 Hz");
	expect_fail((const char *[]){"record", "--max-overhead", "101", NULL},
		    "--max-overhead 101: a percentage from 1 to 100");
	expect_fail((const char *[]){"stat", "--max-overhead", "101", NULL},
		    "vpmu stat: --max-overhead 101: a percentage from 1 to "
		    "100");
	expect_fail((const char *[]){"run", "--max-sample-rate", "0", "x.elf",
				     NULL},
		    "--max-sample-rate: '0' is not a whole number from 1 to "
		    "1000000");
	expect_fail(
		(const char *[]){"run", "--max-overhead", "200", "x.elf", NULL},
		"--max-overhead: '200' is not a whole number from 1 to 100");
	/* The default input is vpmu.rec (not here). */
	expect_fail((const char *[]){"report", NULL},
		    "vpmu report: vpmu.rec: No such file or directory");
	expect_fail((const char *[]){"report", "a", "b", NULL},
		    "unexpected argument 'b'");
	expect_fail((const char *[]){"list", "--json=1", NULL},
		    "option '-j/--json' takes no value");
	expect_fail((const char *[]){"events", "--frob", NULL},
		    "vpmu events: unknown or ambiguous option '--frob'");
	expect_fail((const char *[]){"run", "--frob", NULL},
		    "vpmu run: unknown or ambiguous option '--frob'");
	expect_fail((const char *[]){"run", NULL}, "no guest image");
}

/*
 * Event modifiers where they mean something, kvmstat events
 * refused with who can count them (not "unknown event"), -r's limits.
 * Each is found before any VM is looked for (none runs here).
 */
Test(cli_program, event_modifiers_kvmstat_and_repeat_errors)
{
	expect_fail((const char *[]){"stat", "-e", "kvmstat:exits", NULL},
		    "vpmu stat: event 'kvmstat:exits': KVM statistics "
		    "(kvmstat:*) are counted by guests only");
	expect_fail((const char *[]){"record", "-e", "kvmstat:exits", NULL},
		    "vpmu record: event 'kvmstat:exits'");
	expect_fail((const char *[]){"stat", "-e", "hv_exits:u", NULL},
		    "vpmu stat: event 'hv_exits:u': modifier 'u' (guest "
		    "ring 3) has no meaning for hv_exits");
	expect_fail((const char *[]){"record", "-e", "cycles:h", NULL},
		    "modifier 'h' (hypervisor/host) has no meaning for cycles");
	expect_fail((const char *[]){"top", "-e", "hv_guest_cycles:k", NULL},
		    "vpmu top: event 'hv_guest_cycles:k'");
	expect_fail((const char *[]){"stat", "-e", "hv_exits:q", NULL},
		    "unknown modifier 'q'");
	expect_fail((const char *[]){"stat", "-r", "0", "--", "1", NULL},
		    "-r/--repeat needs a positive integer");
	expect_fail((const char *[]){"stat", "-r", "3", NULL},
		    "-r needs -- SECONDS or a COMMAND to repeat");
	expect_fail((const char *[]){"stat", "-r", "3", "-I", "100", "--", "1",
				     NULL},
		    "-r and -I do not go together");
	/* Meaningful modifiers pass the parser: the run stops at "no VM". */
	expect_fail((const char *[]){"stat", "-e", "cycles:uk,hv_exits:h", "-r",
				     "2", "--", "1", NULL},
		    "no running VM to monitor");
}

/* `vpmu events` says who can count each event: kvmstat is guests only. */
Test(cli_program, events_say_who_can_count)
{
	static struct vpmu_out r;
	const char *line;

	vpmu_prog((const char *[]){"events", NULL}, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, " WHO ") != NULL, "%s", r.out);
	line = strstr(r.out, "hv_exits ");
	cr_assert_not_null(line);
	cr_expect(strstr(line, " all ") < strchr(line, '\n'), "%.120s", line);
	line = strstr(r.out, "0x00e2  kvmstat");
	if (line) /* the family row, when this host lists it */
		cr_expect(strstr(line, " guest ") < strchr(line, '\n'),
			  "%.120s", line);
	vpmu_prog((const char *[]){"events", "--json", NULL}, &r);
	cr_assert_eq(r.status, 0);
	cr_expect(strstr(r.out, "\"operators\": true") != NULL);
}

Test(cli_program, no_vm_to_monitor_is_one_line)
{
	expect_fail((const char *[]){"stat", "--", "1", NULL},
		    "no running VM to monitor");
	expect_fail((const char *[]){"stat", "-p", "web", "--", "1", NULL},
		    "no running VM matches 'web'");
}

/*
 * A FIFO named as the guest image, the kernel or the snapshot to restore
 * is refused at once (vpmu-vmm opens it without waiting for a writer).
 */
Test(cli_program, run_refuses_a_fifo_at_once, .timeout = 30)
{
	char dir[] = "/tmp/vpmu-cli-fifo-XXXXXX", fifo[64], msg[128];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/f", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(msg, sizeof(msg), "%s: not a regular file (it is a FIFO)",
		 fifo);
	expect_fail((const char *[]){"run", fifo, NULL}, msg);
	expect_fail((const char *[]){"run", "--kernel", fifo, NULL}, msg);
	expect_fail((const char *[]){"run", "--restore", fifo, NULL}, msg);
	unlink(fifo);
	rmdir(dir);
}

/* Two live VMs never share a name: the second `vpmu run --name` fails. */
Test(cli_program, run_refuses_the_name_of_a_running_vm)
{
	struct vmm_reg_entry e = {
		.uuid     = "0123abcd-0000-4000-8000-000000000001",
		.name     = "web",
		.nr_vcpus = 1,
		.pmu      = "none",
		.image    = "/x.elf",
		.socket   = "/nonexistent.sock",
	};
	char dir[]         = "/tmp/vpmu-cli-name-XXXXXX";
	const char *argv[] = {"run", VPMU_BUILD_DIR "/guests/hello.elf",
			      "--name", "web", NULL};
	struct vpmu_out r;

	cr_assert_not_null(mkdtemp(dir));
	e.pid = getpid(); /* alive */
	cr_assert_eq(vmm_registry_write(dir, &e), 0);
	vpmu_prog_in(dir, argv, &r);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "a VM named 'web' is already running") != NULL,
		  "%s", r.err);
	cr_expect(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "%s",
		  r.err);
	vmm_registry_remove(dir, e.uuid);
	rmdir(dir);
}

Test(cli_program, registry_finds_live_names_only)
{
	struct vmm_reg_entry
		e =
			{
				.uuid = "0123abcd-0000-4000-8000-000000000002",
				.name = "db",
				.nr_vcpus = 1,
				.pmu      = "none",
				.image    = "/x.elf",
				.socket   = "/nonexistent.sock",
			},
		found;
	char dir[] = "/tmp/vpmu-cli-name-XXXXXX";
	pid_t dead;

	cr_assert_not_null(mkdtemp(dir));
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0); /* reaped: its pid is gone */
	e.pid = dead;
	cr_assert_eq(vmm_registry_write(dir, &e), 0);
	cr_expect_eq(vmm_registry_find_name(dir, "db", &found), 0,
		     "the VMM of that entry is dead");
	e.pid = getpid();
	cr_assert_eq(vmm_registry_write(dir, &e), 0);
	cr_expect_eq(vmm_registry_find_name(dir, "db", &found), 1);
	cr_expect_eq(found.pid, getpid());
	cr_expect_eq(vmm_registry_find_name(dir, "dbx", &found), 0);
	cr_expect_eq(vmm_registry_find_name("/nonexistent/x", "db", &found), 0);
	vmm_registry_remove(dir, e.uuid);
	rmdir(dir);
}
