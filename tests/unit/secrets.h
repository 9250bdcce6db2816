/* SPDX-License-Identifier: ISC */
/*
 * secrets.h - secret sets for unit tests, loaded as the programs load
 * them: through a 0600 temporary file, one secret a line
 */
#ifndef HOOKINBOX_TEST_SECRETS_H
#define HOOKINBOX_TEST_SECRETS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secret.h"

/* a secret set holding the given lines; aborts when it cannot be made */
static secret_set *
make_secrets(const char *const *lines, size_t n)
{
	char path[] = "/tmp/hookinbox-test-secretXXXXXX";
	char err[256];
	int fd = mkstemp(path);
	secret_set *set;

	if (fd < 0)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (write(fd, lines[i], strlen(lines[i])) < 0 || write(fd, "\n", 1) < 0)
			abort();
	}
	close(fd);
	set = secret_set_load(path, err, sizeof(err));
	unlink(path);
	if (set == NULL) {
		printf("# %s\n", err);
		abort();
	}
	return set;
}

#endif
