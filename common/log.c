/* SPDX-License-Identifier: ISC */
/*
 * log.c - one line per event on stderr, key=value or JSON
 *
 * Each line is formatted into one buffer and written with a single
 * write(2) so that lines from several processes sharing stderr (the web
 * server's error log) do not interleave.
 */
#include "log.h"
#include "utf8.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX 4096

/* LOG_NUM: only its address matters */
const char log_num_marker[] = "";

static const char *log_prog = "hookinbox";
/*
 * Set again by the responder's SIGHUP reload while its request threads
 * write lines: atomic (relaxed: a line in either format is right).
 */
static atomic_int log_fmt = LOG_FORMAT_TEXT;
static atomic_bool log_quiet;

typedef struct line {
	char buf[LOG_LINE_MAX];
	size_t len;
} line;

static void
line_putc(line *l, char c)
{
	/* keep room for the newline */
	if (l->len < sizeof(l->buf) - 2)
		l->buf[l->len++] = c;
}

static void
line_puts(line *l, const char *s)
{
	while (*s)
		line_putc(l, *s++);
}

/* n bytes that belong together (one UTF-8 sequence): all of them, or none */
static void
line_putn(line *l, const unsigned char *p, size_t n)
{
	if (n > sizeof(l->buf) - 2 - l->len)
		return;
	memcpy(l->buf + l->len, p, n);
	l->len += n;
}

/*
 * Quote a value.  Text: printable ASCII kept, the rest escaped as \xNN.
 * JSON: well-formed UTF-8 kept as it is, what JSON requires escaped, and
 * a byte that is not part of a well-formed sequence written as U+FFFD.
 */
static void
line_put_value(line *l, const char *v, int json)
{
	static const char hex[] = "0123456789abcdef";
	int bare = !json && *v != '\0';

	for (const char *p = v; *p && bare; p++)
		if (*p <= ' ' || *p == '"' || *p == '\\' || *p == '=' || (unsigned char)*p >= 0x7f)
			bare = 0;
	if (bare) {
		line_puts(l, v);
		return;
	}
	line_putc(l, '"');
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*p == '"' || *p == '\\') {
			line_putc(l, '\\');
			line_putc(l, (char)*p);
		} else if (json && *p >= 0x80) {
			uint32_t cp;
			size_t n = utf8_next(p, strnlen((const char *)p, 4), &cp);

			if (n == 0) {
				line_puts(l, "\\ufffd");
			} else {
				line_putn(l, p, n);
				p += n - 1;
			}
		} else if (*p < 0x20 || *p >= 0x7f) {
			line_puts(l, json ? "\\u00" : "\\x");
			line_putc(l, hex[*p >> 4]);
			line_putc(l, hex[*p & 15]);
		} else {
			line_putc(l, (char)*p);
		}
	}
	line_putc(l, '"');
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, JSON's number grammar */
static bool
is_json_number(const char *v)
{
	const char *p = v;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return false;
	if (*p == '.') {
		if (!(*++p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

static void
line_emit(line *l)
{
	ssize_t n;

	l->buf[l->len++] = '\n';
	n = write(STDERR_FILENO, l->buf, l->len);
	(void)n; /* nowhere left to report a failed log write */
}

static void
line_time(line *l)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	line_puts(l, ts);
}

void
log_init(const char *progname)
{
	log_prog = progname;
}

void
log_set_format(log_format fmt)
{
	atomic_store_explicit(&log_fmt, (int)fmt, memory_order_relaxed);
}

void
log_set_quiet(bool quiet)
{
	atomic_store_explicit(&log_quiet, quiet, memory_order_relaxed);
}

static void log_msg(const char *level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void
log_msg(const char *level, const char *fmt, va_list ap)
{
	line l = {.len = 0};
	char msg[LOG_LINE_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap); /* truncation is acceptable */
	if (atomic_load_explicit(&log_fmt, memory_order_relaxed) == LOG_FORMAT_JSON) {
		line_puts(&l, "{\"ts\":\"");
		line_time(&l);
		line_puts(&l, "\",\"prog\":");
		line_put_value(&l, log_prog, 1);
		line_puts(&l, ",\"level\":");
		line_put_value(&l, level, 1);
		line_puts(&l, ",\"msg\":");
		line_put_value(&l, msg, 1);
		line_putc(&l, '}');
	} else {
		/* a web server's error log or cron's mail adds no time of its own */
		line_time(&l);
		line_putc(&l, ' ');
		line_puts(&l, log_prog);
		line_puts(&l, ": ");
		line_puts(&l, level);
		line_puts(&l, ": ");
		for (const char *p = msg; *p; p++)
			line_putc(&l, (*p == '\n' || *p == '\r') ? ' ' : *p);
	}
	line_emit(&l);
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_msg("error", fmt, ap);
	va_end(ap);
}

void
log_errors(const char *text)
{
	const char *p = text;

	while (*p != '\0') {
		size_t n = strcspn(p, "\n");

		log_error("%.*s", (int)n, p);
		p += n;
		if (*p == '\n')
			p++;
	}
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_msg("warning", fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (atomic_load_explicit(&log_quiet, memory_order_relaxed))
		return;
	va_start(ap, fmt);
	log_msg("info", fmt, ap);
	va_end(ap);
}

/* one record; level NULL for log_kv's (no level key) */
static void
log_kv_va(const char *level, const char *event, va_list ap)
{
	line l = {.len = 0};
	const char *k;
	int json = atomic_load_explicit(&log_fmt, memory_order_relaxed) == LOG_FORMAT_JSON;

	if (json) {
		line_puts(&l, "{\"ts\":\"");
		line_time(&l);
		line_puts(&l, "\",\"prog\":");
		line_put_value(&l, log_prog, 1);
		if (level != NULL) {
			line_puts(&l, ",\"level\":");
			line_put_value(&l, level, 1);
		}
		line_puts(&l, ",\"event\":");
		line_put_value(&l, event, 1);
	} else {
		line_puts(&l, "ts=");
		line_time(&l);
		line_puts(&l, " prog=");
		line_puts(&l, log_prog);
		if (level != NULL) {
			line_puts(&l, " level=");
			line_puts(&l, level);
		}
		line_puts(&l, " event=");
		line_put_value(&l, event, 0);
	}
	while ((k = va_arg(ap, const char *)) != NULL) {
		bool num = k == LOG_NUM;
		const char *v;

		if (num && (k = va_arg(ap, const char *)) == NULL)
			break; /* LOG_NUM, LOG_END: a caller's slip, nothing to write */
		v = va_arg(ap, const char *);
		if (v == NULL)
			continue;
		if (json) {
			line_putc(&l, ',');
			line_put_value(&l, k, 1);
			line_putc(&l, ':');
			if (num && is_json_number(v))
				line_puts(&l, v);
			else
				line_put_value(&l, v, 1);
		} else {
			line_putc(&l, ' ');
			line_puts(&l, k);
			line_putc(&l, '=');
			line_put_value(&l, v, 0);
		}
	}
	if (json)
		line_putc(&l, '}');
	line_emit(&l);
}

void
log_kv(const char *event, ...)
{
	va_list ap;

	if (atomic_load_explicit(&log_quiet, memory_order_relaxed))
		return;
	va_start(ap, event);
	log_kv_va(NULL, event, ap);
	va_end(ap);
}

void
log_kv_warn(const char *event, ...)
{
	va_list ap;

	va_start(ap, event);
	log_kv_va("warning", event, ap);
	va_end(ap);
}
