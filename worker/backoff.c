/* SPDX-License-Identifier: ISC */
/*
 * backoff.c - what a call's result means and when to try again
 */
#include "backoff.h"

call_class
backoff_classify(long status)
{
	if (status >= 200 && status <= 299)
		return CALL_SUCCESS;
	if (status == 0 || status == 408 || status == 409 || status == 425 || status == 429 ||
	    (status >= 500 && status <= 599))
		return CALL_RETRY;
	/* 1xx/3xx (redirects are not followed) and the other 4xx */
	return CALL_FATAL;
}

double
backoff_delay(const backoff_policy *p, int attempt, double u, double retry_after_s)
{
	double d = p->base_s > 0 ? (double)p->base_s : 1.0;
	double cap = p->cap_s > 0 ? (double)p->cap_s : d;

	for (int i = 1; i < attempt && d < cap; i++)
		d *= 2.0;
	if (d > cap)
		d = cap;
	if (u < 0.0)
		u = 0.0;
	if (u >= 1.0)
		u = 0.999999;
	d *= 0.8 + 0.4 * u;
	if (retry_after_s > BACKOFF_RETRY_AFTER_MAX_S)
		retry_after_s = BACKOFF_RETRY_AFTER_MAX_S;
	if (retry_after_s >= 0.0 && d < retry_after_s)
		d = retry_after_s;
	return d;
}

bool
backoff_exhausted(const backoff_policy *p, int attempt, int max_attempts, double age_s,
		  double delay_s)
{
	if (attempt >= max_attempts)
		return true;
	return age_s + delay_s > (double)p->retry_window_s;
}
