/* SPDX-License-Identifier: ISC */
/*
 * null.c - the web-server ceiling for benchmarks: a FastCGI responder
 * that reads the body and answers 200 without any other work.
 * Built only as obj/bench/null.fcgi (bench/bench.mk); never installed.
 */
#include <fcgiapp.h>
#include <stdlib.h>

int main(void);

int
main(void)
{
	FCGX_Request req;
	char buf[65536];

	FCGX_Init();
	FCGX_InitRequest(&req, 0, 0);
	while (FCGX_Accept_r(&req) >= 0) {
		while (FCGX_GetStr(buf, sizeof(buf), req.in) > 0)
			;
		FCGX_PutS("Status: 200 OK\r\nContent-Type: application/json\r\n\r\n{\"id\":0}\n",
			  req.out);
		FCGX_Finish_r(&req);
	}
	return EXIT_SUCCESS;
}
