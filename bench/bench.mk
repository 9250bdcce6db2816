# SPDX-License-Identifier: ISC
# bench/bench.mk - the benchmark's own programs (included by the Makefile).
# Built with the project's flags; never installed, not part of `make check`.

BENCH_PROGRAMS = obj/bench/loadgen obj/bench/downstream obj/bench/null.fcgi obj/bench/naive.fcgi \
	obj/bench/verifycost

obj/bench/loadgen: bench/loadgen.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(HARDEN) -D_GNU_SOURCE $(shell $(PKG_CONFIG) --cflags libcurl openssl) \
		$(CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(shell $(PKG_CONFIG) --libs libcurl libcrypto)

obj/bench/downstream: bench/downstream.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(HARDEN) -D_GNU_SOURCE $(CFLAGS) $(ALL_LDFLAGS) -o $@ $<

# the web-server ceiling: a FastCGI responder that only reads the body
obj/bench/null.fcgi: bench/null.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(HARDEN) -D_GNU_SOURCE $(CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lfcgi

# the naive intake, hookinbox's one-commit mode's yardstick: HMAC, json-c, one INSERT
obj/bench/naive.fcgi: bench/naive.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(HARDEN) -D_GNU_SOURCE $(shell $(PKG_CONFIG) --cflags libpq json-c openssl) \
		$(CFLAGS) $(ALL_LDFLAGS) -o $@ $< -lfcgi $(shell $(PKG_CONFIG) --libs libpq json-c libcrypto)

# the cost of checking a signature, per provider class (µs per delivery)
obj/bench/verifycost: $(call objs,release,$(COMMON_SRC)) bench/verifycost.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(INC_providers) $(ALL_LDFLAGS) -o $@ bench/verifycost.c \
		$(call objs,release,$(COMMON_SRC)) $(LIBS_COMMON)

build-bench: $(BENCH_PROGRAMS)

.PHONY: build-bench
