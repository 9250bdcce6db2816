/* SPDX-License-Identifier: ISC */
/*
 * secret.c - secrets read from files, kept in one place, wiped on free
 */
#include "secret.h"

#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define SECRET_FILE_MAX 65536
#define SECRET_MAX_COUNT 16

struct secret_set {
	size_t n;
	unsigned char *val[SECRET_MAX_COUNT];
	size_t len[SECRET_MAX_COUNT];
};

static int
mode_ok(const struct stat *st)
{
	if (st->st_uid == 0)
		return (st->st_mode & 0137) == 0; /* at most 0640 */
	return (st->st_mode & 0177) == 0;	  /* at most 0600 */
}

secret_set *
secret_set_load(const char *path, char *errbuf, size_t errlen)
{
	secret_set *set = NULL;
	unsigned char *data = NULL;
	size_t used = 0;
	struct stat st;
	int fd;

	/* O_NONBLOCK: a FIFO named by mistake must not hang the start */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(errbuf, errlen, "could not open secret file \"%s\": %s", path,
			 strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(errbuf, errlen, "secret file \"%s\" is not a regular file", path);
		goto out;
	}
	if (!mode_ok(&st)) {
		snprintf(errbuf, errlen,
			 "secret file \"%s\" has group or world access (mode %04o); "
			 "use 0600, or 0640 when owned by root",
			 path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	data = xmalloc(SECRET_FILE_MAX);
	for (;;) {
		ssize_t n = read(fd, data + used, SECRET_FILE_MAX - used);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(errbuf, errlen, "could not read secret file \"%s\": %s", path,
				 strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used == SECRET_FILE_MAX) {
			snprintf(errbuf, errlen, "secret file \"%s\" is too large", path);
			goto out;
		}
	}

	set = xcalloc(1, sizeof(*set));
	for (size_t i = 0; i < used;) {
		size_t j = i, end;

		while (j < used && data[j] != '\n')
			j++;
		end = j;
		if (end > i && data[end - 1] == '\r')
			end--;
		/* trim trailing blanks: editors add them, no provider's secret ends in one */
		while (end > i && (data[end - 1] == ' ' || data[end - 1] == '\t'))
			end--;
		if (end > i && data[i] != '#') {
			if (set->n == SECRET_MAX_COUNT) {
				snprintf(errbuf, errlen,
					 "secret file \"%s\" has more than %d secrets", path,
					 SECRET_MAX_COUNT);
				secret_set_free(set);
				set = NULL;
				goto out;
			}
			set->len[set->n] = end - i;
			set->val[set->n] = xmalloc(end - i + 1);
			memcpy(set->val[set->n], data + i, end - i);
			set->val[set->n][end - i] = '\0';
			set->n++;
		}
		i = j + 1;
	}
	if (set->n == 0) {
		snprintf(errbuf, errlen, "secret file \"%s\" holds no secret", path);
		secret_set_free(set);
		set = NULL;
	}
out:
	if (data != NULL) {
		OPENSSL_cleanse(data, SECRET_FILE_MAX);
		free(data);
	}
	close(fd);
	return set;
}

void
secret_set_free(secret_set *set)
{
	if (set == NULL)
		return;
	for (size_t i = 0; i < set->n; i++) {
		OPENSSL_cleanse(set->val[i], set->len[i]);
		free(set->val[i]);
	}
	free(set);
}

size_t
secret_count(const secret_set *set)
{
	return set->n;
}

const unsigned char *
secret_get(const secret_set *set, size_t i, size_t *len)
{
	*len = set->len[i];
	return set->val[i];
}
