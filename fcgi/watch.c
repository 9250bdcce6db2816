/* SPDX-License-Identifier: ISC */
/*
 * watch.c - has the configuration or a secret file changed on disk?
 */
#include "watch.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dynbuf.h"
#include "xalloc.h"

typedef struct stamp {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
} stamp;

typedef struct watched {
	char *path;
	stamp seen;
} watched;

struct watch {
	watched *f;
	size_t n, alloc;
};

static stamp
stamp_of(const char *path)
{
	struct stat st;
	stamp s;

	memset(&s, 0, sizeof(s));
	if (stat(path, &st) == 0) {
		s.dev = st.st_dev;
		s.ino = st.st_ino;
		s.size = st.st_size;
		s.mtime = st.st_mtim;
		s.ctime = st.st_ctim;
	}
	return s;
}

static bool
stamp_eq(const stamp *a, const stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static void
add(watch *w, char *path)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->f[i].path, path) == 0) {
			free(path);
			return;
		}
	w->f = xgrow(w->f, w->n + 1, &w->alloc, sizeof(*w->f));
	w->f[w->n].path = path;
	w->f[w->n].seen = stamp_of(path);
	w->n++;
}

watch *
watch_new(const conf *cfg, const char *path)
{
	watch *w = xcalloc(1, sizeof(*w));
	const char *slash = strrchr(path, '/');
	/* secret_file is relative to the configuration file's directory */
	char *dir = slash == NULL   ? xstrdup(".")
		    : slash == path ? xstrdup("")
				    : xstrndup(path, (size_t)(slash - path));

	add(w, xstrdup(path));
	for (size_t i = 0; i < conf_endpoint_count(cfg); i++) {
		const endpoint_conf *ep = conf_endpoint_at(cfg, i);
		/* and the asymmetric providers' keys and roots (absolute once loaded) */
		const char *files[] = {ep->secret_file, ep->pe.key_file, ep->pe.ca_file};

		for (size_t j = 0; j < sizeof(files) / sizeof(files[0]); j++)
			if (files[j] != NULL)
				add(w, files[j][0] == '/' ? xstrdup(files[j])
							  : xasprintf("%s/%s", dir, files[j]));
	}
	free(dir);
	return w;
}

void
watch_free(watch *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->f[i].path);
	free(w->f);
	free(w);
}

bool
watch_changed(watch *w)
{
	bool changed = false;

	for (size_t i = 0; i < w->n; i++) {
		stamp now = stamp_of(w->f[i].path);

		if (!stamp_eq(&now, &w->f[i].seen)) {
			w->f[i].seen = now;
			changed = true;
		}
	}
	return changed;
}
