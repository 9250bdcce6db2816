/* SPDX-License-Identifier: ISC */
/*
 * log.h - one line per event on stderr, key=value or JSON
 *
 * Messages follow PostgreSQL's style: short, lower case, no full stop.
 * Callers never pass secrets, signatures or bodies; log_kv quotes values
 * so that a line stays one line whatever bytes a peer sent.
 */
#ifndef HOOKINBOX_LOG_H
#define HOOKINBOX_LOG_H

#include <stdarg.h>
#include <stdbool.h>

typedef enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON } log_format;

/* program name used as the line prefix ("hookinbox.fcgi") */
void log_init(const char *progname);
void log_set_format(log_format fmt);
/*
 * Quiet: only warnings and errors are written (log_kv_warn records too);
 * info lines and log_kv records are dropped (the worker from cron, where any output is mailed).
 */
void log_set_quiet(bool quiet);

/*
 * free-form messages: "2026-12-01T10:00:00Z progname: level: message" (UTC);
 * a newline in the message is written as a blank, so a line stays one line
 */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* log_error for each line of text (every problem a configuration check found) */
void log_errors(const char *text);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Structured record: pairs of (key, value) strings ending with LOG_END.
 *   log_kv("request", "endpoint", ep, LOG_NUM, "status", "200", LOG_END);
 * NULL values are skipped.  LOG_NUM before a key marks its value as a
 * number: JSON writes it bare (200, not "200") when it is a JSON number,
 * else quoted as any string; text output is the same either way.
 */
#define LOG_END ((const char *)0) /* a pointer, not a bare 0, through varargs */
extern const char log_num_marker[];
#define LOG_NUM log_num_marker
void log_kv(const char *event, ...) __attribute__((sentinel));
/*
 * The same record with level=warning, written even when quiet: something
 * an operator must act on although the run goes on (a worker leaving a
 * route's actions alone).  Callers say it once per run, not per item.
 */
void log_kv_warn(const char *event, ...) __attribute__((sentinel));

#endif
