# SPDX-License-Identifier: ISC
# tests/fuzz/fuzz.mk - libFuzzer harnesses for every parser of untrusted bytes
#
# Included from the top Makefile (uses its WARN, DEFS, PKG_INCS, incs, COMMON_SRC and
# LIBS_COMMON).  Built with clang, ASan and UBSan into obj/fuzz/.
#
#   make fuzz                       build, then run each harness FUZZ_SECONDS (20)
#                                   on its seed corpus; fails on any crash, leak,
#                                   UB report or timeout
#   make fuzz FUZZ_SECONDS=3600     run longer (each harness in turn)
#   make fuzz FUZZ_HARNESSES=verify just one (verify envelope content_length fcgirec form conf ecdsa xml)
#   make fuzz-regress               only replay the seed corpus (seconds; for CI)
#   make fuzz-build                 build only; then e.g.
#       obj/fuzz/fuzz_verify -jobs=8 -workers=8 obj/fuzz/corpus/verify tests/fuzz/corpus/verify
#
# New inputs found while fuzzing go to obj/fuzz/corpus/<harness>/ (not in
# git); a crash writes obj/fuzz/artifacts/<harness>-crash-<sha1>, which
# replays with obj/fuzz/fuzz_<harness> <file>.  Worth keeping a new
# interesting input?  Copy it into tests/fuzz/corpus/<harness>/.

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 20
FUZZ_TIMEOUT ?= 10
FUZZ_FLAGS ?=
FUZZ_HARNESSES ?= verify envelope content_length fcgirec form conf ecdsa xml

FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_ALL_CFLAGS = $(WARN) $(DEFS) $(PKG_INCS) -g -O1 $(FUZZ_SAN) \
	-fsanitize=fuzzer-no-link -MMD -MP

# no logging and no libpq results in a harness: log.c and pgvalue.c (which logs) stay out
FUZZ_LIB_SRC = $(filter-out common/log.c common/pgvalue.c,$(COMMON_SRC)) fcgi/content_length.c fcgi/fcgirec.c
FUZZ_LIB_OBJS = $(patsubst %.c,obj/fuzz/%.o,$(FUZZ_LIB_SRC) tests/fuzz/fuzz_request.c)
FUZZ_BINS = $(patsubst %,obj/fuzz/fuzz_%,$(FUZZ_HARNESSES))

obj/fuzz/%.o: %.c tests/fuzz/fuzz.mk
	@mkdir -p $(dir $@)
	@$(FUZZ_CC) $(FUZZ_ALL_CFLAGS) $(call incs,$<) -c -o $@ $<

obj/fuzz/fuzz_%: obj/fuzz/tests/fuzz/fuzz_%.o $(FUZZ_LIB_OBJS)
	@echo "  LD $@"; $(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LIBS_COMMON)

fuzz-build: $(FUZZ_BINS)

# -max_total_time bounds each run; libFuzzer exits non-zero on a crash,
# a leak (LeakSanitizer), a UBSan report or an input slower than FUZZ_TIMEOUT
fuzz: fuzz-build
	@set -e; for h in $(FUZZ_HARNESSES); do \
		mkdir -p obj/fuzz/corpus/$$h obj/fuzz/artifacts; \
		echo "fuzz: $$h for $(FUZZ_SECONDS) s"; \
		obj/fuzz/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) \
			-rss_limit_mb=2048 -max_len=131072 -print_final_stats=1 \
			$$(test -f tests/fuzz/$$h.dict && echo -dict=tests/fuzz/$$h.dict) \
			-artifact_prefix=obj/fuzz/artifacts/$$h- $(FUZZ_FLAGS) \
			obj/fuzz/corpus/$$h tests/fuzz/corpus/$$h \
			2>obj/fuzz/$$h.log || { tail -60 obj/fuzz/$$h.log; echo "fuzz: $$h FAILED (log: obj/fuzz/$$h.log)"; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^Done ' obj/fuzz/$$h.log | tr '\n' ' '; echo; \
	done

# replay the seed corpus once: no fuzzing, a quick regression check
fuzz-regress: fuzz-build
	@set -e; for h in $(FUZZ_HARNESSES); do \
		obj/fuzz/fuzz_$$h -runs=0 -timeout=$(FUZZ_TIMEOUT) tests/fuzz/corpus/$$h \
			2>obj/fuzz/$$h.regress.log || { tail -60 obj/fuzz/$$h.regress.log; exit 1; }; \
		echo "fuzz-regress: $$h ok ($$(ls tests/fuzz/corpus/$$h | wc -l) inputs)"; \
	done

.PHONY: fuzz fuzz-build fuzz-regress
