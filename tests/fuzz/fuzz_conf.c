/* SPDX-License-Identifier: ISC */
/*
 * fuzz_conf.c - the configuration parser (conf_load on a file of fuzzed bytes)
 *
 * The file is written into a temp directory that also holds a good secret
 * file "secrets" (0600), a world-readable one "open" (must be refused) and
 * an empty one, so that relative secret_file names reach every check.
 * Inputs naming device or kernel files are skipped: opening a FIFO would
 * block, which says nothing about the parser.
 */
#include "conf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/hookinbox-fuzzconf-XXXXXX";
static char cfg_path[sizeof(dir) + 32];

static void
write_file(const char *name, const char *text, mode_t mode)
{
	char path[sizeof(dir) + 32];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	if (fp == NULL || fputs(text, fp) < 0 || fclose(fp) != 0 || chmod(path, mode) != 0) {
		perror(path);
		abort();
	}
}

static void
cleanup(void)
{
	static const char *const names[] = {"secrets", "open", "empty", "hookinbox.conf"};
	char path[sizeof(dir) + 32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void
setup(void)
{
	if (cfg_path[0] != '\0')
		return;
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	write_file("secrets", "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM=\n# old\nfuzz-secret\n", 0600);
	write_file("open", "readable-by-all\n", 0644);
	write_file("empty", "\n# nothing\n", 0600);
	snprintf(cfg_path, sizeof(cfg_path), "%s/hookinbox.conf", dir);
	atexit(cleanup);
}

static const char *const skipped[] = {"/dev", "/proc", "/sys", "/run", "/var", "/tmp", ".."};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024];
	FILE *fp;
	conf *c;

	setup();
	for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++) {
		if (memmem(data, size, skipped[i], strlen(skipped[i])) != NULL)
			return -1; /* not added to the corpus */
	}
	fp = fopen(cfg_path, "w");
	if (fp == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, fp) != size)
		abort();
	if (fclose(fp) != 0)
		abort();
	err[0] = '\0';
	c = conf_load(cfg_path, err, sizeof(err));
	if (c == NULL) {
		/* a message naming the file, never empty */
		if (strncmp(err, cfg_path, strlen(cfg_path)) != 0)
			abort();
	} else {
		if (conf_conninfo(c) == NULL)
			abort();
		for (size_t i = 0; i < conf_endpoint_count(c); i++) {
			const endpoint_conf *ep = conf_endpoint_at(c, i);

			if (ep->pe.secrets == NULL || secret_count(ep->pe.secrets) == 0 ||
			    ep->max_body == 0 || conf_endpoint(c, ep->name) != ep)
				abort();
		}
		conf_free(c);
	}
	return 0;
}
