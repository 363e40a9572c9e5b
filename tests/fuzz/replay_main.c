// SPDX-License-Identifier: MIT
/*
 * replay_main.c: main() of a fuzz target built without libFuzzer (gcc, the
 * normal and the sanitizer builds): run the target once on every file of
 * the directories or files named on the command line, so ctest checks that
 * the seed corpus (tests/fuzz/corpus/TARGET) still runs cleanly.
 * Exit 0, or 1 when an input cannot be read; a crash is the target's.
 */
#include "fuzz_input.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Weak: only some targets need an initializer. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static int run_file(const char *path, unsigned int *nr)
{
	uint8_t *buf = NULL;
	size_t len   = 0;
	FILE *f      = fopen(path, "rb");
	struct stat st;

	if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: cannot read a regular file\n", path);
		if (f)
			fclose(f);
		return 1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf)
		len = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (!buf || len != (size_t)st.st_size) {
		fprintf(stderr, "%s: short read\n", path);
		free(buf);
		return 1;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	(*nr)++;
	return 0;
}

static int run_path(const char *path, unsigned int *nr)
{
	struct dirent *e;
	char sub[4096];
	int ret = 0;
	DIR *d  = opendir(path);

	if (!d)
		return run_file(path, nr);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		ret |= run_file(sub, nr);
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned int nr = 0;
	int i, ret = 0;

	fuzz_replaying = true;
	LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		ret |= run_path(argv[i], &nr);
	printf("%s: %u inputs ran\n", argv[0], nr);
	if (!nr) {
		fprintf(stderr, "%s: no inputs\n", argv[0]);
		return 1;
	}
	return ret;
}
