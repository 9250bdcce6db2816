/* SPDX-License-Identifier: ISC */
/*
 * job.c - one claimed action on its way through the worker
 */
#include "job.h"

#include <stdlib.h>

void
job_free(job *j)
{
	if (j == NULL)
		return;
	free(j->route_name);
	free(j->idem_key);
	free(j->event_id);
	free(j->event_type);
	free(j->object_id);
	free(j->content_type);
	free(j->body);
	free(j);
}
