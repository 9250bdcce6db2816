# SPDX-License-Identifier: ISC
# hookinbox - plain GNU make.
#
#   make                  release build: fcgi/hookinbox.fcgi, worker/hookinbox-worker,
#                         backfill/hookinbox-backfill, contrib/hookinbox-send
#   make check            test build (failure points, test clock) + every test
#   make SANITIZE=address,undefined check
#   make VALGRIND=1 check run the programs under valgrind in the tests
#   make bench            benchmarks (not part of check)
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#   make uninstall PREFIX=/usr DESTDIR=/tmp/stage
#   make deb              Debian binary package (dpkg-buildpackage -us -uc -b)
#   make analyze          gcc -fanalyzer, clang-tidy, cppcheck
#   make format-check     clang-format on the files listed in FORMAT_FILES
#
# The user's CFLAGS/LDFLAGS are kept apart from the project's own flags.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBEXECDIR ?= $(PREFIX)/lib/hookinbox
DATADIR ?= $(PREFIX)/share/hookinbox
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc/hookinbox

CC ?= cc
CFLAGS ?= -O2 -g
LDFLAGS ?=
PKG_CONFIG ?= pkg-config
PROVE ?= prove
# one source of truth: the newest entry of debian/changelog (a package built
# as 0.1.1 holds programs, metrics and User-Agents that say 0.1.1)
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)

WARN = -std=c17 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wstrict-prototypes \
	-Wold-style-definition -Wmissing-prototypes -Wpointer-arith -Wcast-qual \
	-Wwrite-strings -Wundef -Wformat=2 -Wimplicit-fallthrough -Wvla -fno-common -Werror
HARDEN = -D_FORTIFY_SOURCE=2 -fstack-protector-strong
HARDEN_LD = -Wl,-z,relro,-z,now
DEFS = -D_GNU_SOURCE -DHOOKINBOX_VERSION='"$(VERSION)"' -DHOOKINBOX_SYSCONFDIR='"$(SYSCONFDIR)"' \
	-DHOOKINBOX_SCHEMA_VERSION=$(words $(wildcard sql/migrations/[0-9]*.sql))
PKG_INCS = $(shell $(PKG_CONFIG) --cflags libpq json-c libcurl inih openssl)

# Layers, each seeing only the layers below it, so that the compiler
# enforces them (`make layers` checks the includes too):
#   common/     the ground floor: -Icommon alone, includes nothing above it
#   providers/  the signature schemes, one file per provider: common/ and itself
#   conf/       the configuration (keys, validation): providers/ and below
#   programs    fcgi/, worker/, backfill/: their own directory and every layer;
#               contrib/ (hookinbox-send) signs only: providers/ and below
# so fcgi/ cannot reach worker/ by accident.  A unit test
# tests/unit/test_NAME.c also sees the directory that holds NAME.c; the
# fuzzers see fcgi/ (content_length).  incs = the -I flags of source file $(1).
INC_common = -Icommon
INC_providers = $(INC_common) -Iproviders
INC_conf = $(INC_providers) -Iconf
INC_contrib = $(INC_providers)
INC_fcgi = $(INC_conf) -Ifcgi
INC_worker = $(INC_conf) -Iworker
INC_backfill = $(INC_conf) -Ibackfill
INC_tests/fuzz = $(INC_fcgi)
INC_tests/unit = $(INC_conf) $(foreach d,fcgi worker,$(if $(wildcard $(d)/$(patsubst test_%,%,$(notdir $(1:.c=))).c),-I$(d)))
incs = $(INC_$(patsubst %/,%,$(dir $(1))))

ifdef SANITIZE
SAN = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

ALL_CFLAGS = $(WARN) $(HARDEN) $(DEFS) $(PKG_INCS) $(SAN) -MMD -MP $(CFLAGS)
ALL_LDFLAGS = $(HARDEN_LD) $(SAN) $(LDFLAGS)

LIBS_COMMON = $(shell $(PKG_CONFIG) --libs libpq json-c inih libcrypto) -lpthread
LIBS_FCGI = -lfcgi $(LIBS_COMMON)
LIBS_WORKER = $(shell $(PKG_CONFIG) --libs libcurl) $(LIBS_COMMON)

# providers/ (one file per provider: verify, envelope, sign) is shared like
# common/: the responder verifies, hookinbox-send and the worker sign;
# conf/ is linked into the programs that read the configuration
COMMON_SRC = $(wildcard common/*.c providers/*.c conf/*.c)
SEND_SRC = $(wildcard common/*.c providers/*.c)
FCGI_MODS = $(filter-out fcgi/main.c,$(wildcard fcgi/*.c))
WORKER_MODS = $(filter-out worker/main.c,$(wildcard worker/*.c))
BACKFILL_MODS = $(filter-out backfill/main.c,$(wildcard backfill/*.c))
UNIT_SRC = $(wildcard tests/unit/test_*.c)

.DEFAULT_GOAL := all

# A stamp named after the flags: changing SANITIZE or CFLAGS rebuilds
# everything instead of linking objects built with other flags.
FLAGS_HASH := $(shell echo '$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS)' | md5sum | cut -c1-12)
STAMP = obj/flags-$(FLAGS_HASH)
$(STAMP):
	@mkdir -p obj
	@rm -f obj/flags-*
	@touch $@

# Release objects under obj/release, test-build objects (failure points,
# test clock) under obj/test: the shipped binaries contain no failure points.
obj/release/%.o: %.c $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(call incs,$<) -c -o $@ $<
obj/test/%.o: %.c $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(call incs,$<) -DHOOKINBOX_TEST -c -o $@ $<

objs = $(patsubst %.c,obj/$(1)/%.o,$(2))

PROGRAMS = fcgi/hookinbox.fcgi worker/hookinbox-worker backfill/hookinbox-backfill \
	contrib/hookinbox-send
TEST_PROGRAMS = obj/test/hookinbox.fcgi obj/test/hookinbox-worker obj/test/hookinbox-backfill \
	obj/test/hookinbox-send
UNIT_PROGRAMS = $(patsubst tests/unit/%.c,obj/test/unit/%,$(UNIT_SRC))

all: $(PROGRAMS)

define program
$(1): $(call objs,$(2),$(3))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ $(4)
endef

$(eval $(call program,fcgi/hookinbox.fcgi,release,fcgi/main.c $(FCGI_MODS) $(COMMON_SRC),$(LIBS_FCGI)))
$(eval $(call program,obj/test/hookinbox.fcgi,test,fcgi/main.c $(FCGI_MODS) $(COMMON_SRC),$(LIBS_FCGI)))
$(eval $(call program,worker/hookinbox-worker,release,worker/main.c $(WORKER_MODS) $(COMMON_SRC),$(LIBS_WORKER)))
$(eval $(call program,obj/test/hookinbox-worker,test,worker/main.c $(WORKER_MODS) $(COMMON_SRC),$(LIBS_WORKER)))
$(eval $(call program,backfill/hookinbox-backfill,release,backfill/main.c $(BACKFILL_MODS) $(COMMON_SRC),$(LIBS_WORKER)))
$(eval $(call program,obj/test/hookinbox-backfill,test,backfill/main.c $(BACKFILL_MODS) $(COMMON_SRC),$(LIBS_WORKER)))
$(eval $(call program,contrib/hookinbox-send,release,contrib/hookinbox-send.c $(SEND_SRC),$(LIBS_WORKER)))
$(eval $(call program,obj/test/hookinbox-send,test,contrib/hookinbox-send.c $(SEND_SRC),$(LIBS_WORKER)))

# A unit test tests/unit/test_NAME.c links the shared code plus the modules
# of the program that holds NAME.c (fcgi/ or worker/).
unit_mods = $(COMMON_SRC) $(if $(wildcard fcgi/$(1).c),$(FCGI_MODS)) \
	$(if $(wildcard worker/$(1).c),$(WORKER_MODS))
define unit_test
obj/test/unit/test_$(1): $(call objs,test,tests/unit/test_$(1).c $(call unit_mods,$(1)))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ $$(LIBS_WORKER) -lfcgi
endef
$(foreach t,$(patsubst tests/unit/test_%.c,%,$(UNIT_SRC)),$(eval $(call unit_test,$(t))))

# counts the allocations of a test's responder (LD_PRELOAD; tests/lib/malloccount.c)
obj/test/malloccount.so: tests/lib/malloccount.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_GNU_SOURCE -O2 -fPIC -shared -o $@ $<

build-tests: $(TEST_PROGRAMS) $(UNIT_PROGRAMS) obj/test/malloccount.so

# Every test: C unit tests (TAP) and Perl integration tests.  Each
# integration test starts its own PostgreSQL cluster and servers on free
# ports, so they run CHECK_JOBS at a time; the valgrind runs (97, 98) and
# the scan of everything the suite logged (99) come after, in order.
CHECK_JOBS ?= 3
PROVE_ALL = HOOKINBOX_TOP=$(CURDIR) $(PROVE) --timer -I tests/lib $(PROVE_FLAGS)
# Under ThreadSanitizer the tests of the worker alone are left out: the
# worker is one thread (libcurl's multi interface), so TSan has nothing to
# find in them, and the responder paths they reach run in the others.
ifeq ($(SANITIZE),thread)
CHECK_LEFT_OUT = $(wildcard tests/t/2[0-9]-*.t tests/t/4[0-9]-*.t tests/t/5[5-9]-*.t) \
	tests/t/34-routes-state-source.t tests/t/36-routes-replay-reconcile.t \
	tests/t/37-routes-rolling-sequence.t tests/t/85-model.t
endif
check: layers all build-tests
	rm -rf tests/tmp
	$(PROVE_ALL) -j$(CHECK_JOBS) $(UNIT_PROGRAMS) \
		$(filter-out tests/t/9% $(CHECK_LEFT_OUT),$(wildcard tests/t/*.t))
ifdef SANITIZE
	# valgrind cannot run sanitized binaries: only the secret scan
	$(PROVE_ALL) tests/t/99-secrets.t
else
	HOOKINBOX_VALGRIND=1 $(PROVE_ALL) $(wildcard tests/t/9*.t)
endif

# the layers in the sources: common/ includes only common/, providers/ only
# common/ and itself, conf/ those and itself; no PROVIDER_ id outside
# providers/ (tools/check-layers); no banned call (tools/check-banned)
layers:
	tools/check-layers
	tools/check-banned
.PHONY: layers

# make soak SOAK_SECONDS=3600: the model checker (tests/model/README),
# SOAK_JOBS seeded schedules at once (default: the cores) until the time is
# up, the SOAK_SEEDS first (the fixed regression seeds), then random ones;
# prints schedules/hour, operations, invariant checks and how often each
# operation reached its target, or each failure and the line that replays it
SOAK_SECONDS ?= 600
SOAK_OPS ?= 200
SOAK_JOBS ?= 0
SOAK_SEEDS ?= 151922 44 33 166894 211990 227116 305806 632760 644931
soak: all build-tests
	HOOKINBOX_TOP=$(CURDIR) nice perl -I tests/lib -I tests/model tests/model/run.pl --soak $(SOAK_SECONDS) \
		--ops $(SOAK_OPS) --jobs $(SOAK_JOBS) --seeds '$(SOAK_SEEDS)'
.PHONY: soak

# make mutants: the proof that the model checker catches real bugs
# (tests/model/mutants/run.sh): each mutant patch in a scratch worktree of
# HEAD under /tmp, seeds 1..MUTANT_SEEDS until the checker fails, a table
MUTANT_SEEDS ?= 10
MUTANT_OPS ?= 100
mutants:
	MUTANT_SEEDS=$(MUTANT_SEEDS) MUTANT_OPS=$(MUTANT_OPS) tests/model/mutants/run.sh
.PHONY: mutants

include bench/bench.mk
bench: all build-tests build-bench
	HOOKINBOX_TOP=$(CURDIR) perl -I tests/lib bench/run.pl

# Static analysis: gcc -fanalyzer and clang-tidy (.clang-tidy) over every
# module, and cppcheck; each directory with its own include paths (INC_*)
CLANG_TIDY ?= clang-tidy-14
CLANG_FORMAT ?= clang-format-14
ANALYZE_SRC = $(COMMON_SRC) $(wildcard fcgi/*.c worker/*.c backfill/*.c) contrib/hookinbox-send.c
analyze:
	@set -e; $(foreach f,$(ANALYZE_SRC), \
		$(CC) $(WARN) $(DEFS) $(PKG_INCS) $(call incs,$(f)) -fanalyzer -c -o /dev/null $(f);)
	@set -e; $(foreach f,$(ANALYZE_SRC), \
		$(CLANG_TIDY) --quiet $(f) -- $(WARN) $(DEFS) $(PKG_INCS) $(call incs,$(f)) 2>/dev/null;)
	@set -e; $(foreach d,common providers conf fcgi worker backfill contrib, \
		cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability --inline-suppr \
		$(INC_$(d)) --suppress=missingIncludeSystem $(d);)

# Every C file of the tree, in .clang-format's style (git's, adapted: see the file).
FORMAT_FILES = $(shell find common conf fcgi worker backfill providers contrib bench tests -name '*.[ch]' | sort)
format-check:
	$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES)

# make fuzz, fuzz-build, fuzz-regress: libFuzzer harnesses (clang)
include tests/fuzz/fuzz.mk

# The files under etc/ and man/ name the default installed paths
# (/usr/local/sbin/hookinbox..., /usr/local/share/hookinbox, /etc/hookinbox),
# so they are usable as they stand after a default install; install writes
# each with the paths of this installation instead.
SUBST_PATHS = sed -e 's|/usr/local/sbin/hookinbox|$(SBINDIR)/hookinbox|g' \
	-e 's|/usr/local/bin/hookinbox|$(BINDIR)/hookinbox|g' \
	-e 's|/usr/local/share/hookinbox|$(DATADIR)|g' \
	-e 's|/etc/hookinbox|$(SYSCONFDIR)|g'
ETC_FILES = $(patsubst etc/%,%,$(shell find etc -type f | sort))
MAN_PAGES = $(wildcard man/*.[158])

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/sql/migrations
	install -m 755 fcgi/hookinbox.fcgi worker/hookinbox-worker backfill/hookinbox-backfill \
		$(DESTDIR)$(SBINDIR)/
	install -m 755 contrib/hookinbox-send $(DESTDIR)$(BINDIR)/
	install -m 644 sql/*.sql sql/*.inc $(DESTDIR)$(DATADIR)/sql/
	install -m 644 sql/migrations/*.sql $(DESTDIR)$(DATADIR)/sql/migrations/
	for f in $(ETC_FILES); do \
		install -d $(DESTDIR)$(DATADIR)/etc/$$(dirname $$f) && \
		$(SUBST_PATHS) etc/$$f > $(DESTDIR)$(DATADIR)/etc/$$f && \
		chmod 644 $(DESTDIR)$(DATADIR)/etc/$$f || exit 1; done
	for f in $(MAN_PAGES); do s=$${f##*.}; \
		install -d $(DESTDIR)$(MANDIR)/man$$s && \
		$(SUBST_PATHS) -e '1s/"hookinbox [^"]*"/"hookinbox $(VERSION)"/' $$f \
			> $(DESTDIR)$(MANDIR)/man$$s/$${f##*/} && \
		chmod 644 $(DESTDIR)$(MANDIR)/man$$s/$${f##*/} || exit 1; done

# removes what install wrote (and DATADIR, which is hookinbox's own)
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/hookinbox.fcgi $(DESTDIR)$(SBINDIR)/hookinbox-worker \
		$(DESTDIR)$(SBINDIR)/hookinbox-backfill \
		$(DESTDIR)$(BINDIR)/hookinbox-send
	rm -rf $(DESTDIR)$(DATADIR)/sql $(DESTDIR)$(DATADIR)/etc
	for f in $(MAN_PAGES); do rm -f $(DESTDIR)$(MANDIR)/man$${f##*.}/$${f##*/}; done
	-rmdir $(DESTDIR)$(DATADIR)

# The Debian packages (debian/), source and binary, built from a copy of the
# tree under obj/deb so that dpkg-buildpackage's files (written to the
# parent directory) stay there: obj/deb/hookinbox_$(VERSION).dsc and .tar.xz,
# obj/deb/hookinbox_$(VERSION)_*.deb and the .changes that lists them all
deb:
	rm -rf obj/deb
	mkdir -p obj/deb/hookinbox-$(VERSION)
	# the source package holds the tracked files only (a test run leaves
	# tests/sdk/node_modules, clusters and logs in the tree)
	if [ -e .git ]; then git ls-files -z | tar --null -T - -cf -; \
	else tar -cf - --exclude=./obj --exclude=./tests/tmp --exclude=./var --exclude=./bench/out \
		--exclude=./tests/sdk/node_modules $(PROGRAMS:%=--exclude=./%) .; fi \
		| tar -xf - -C obj/deb/hookinbox-$(VERSION)
	cd obj/deb/hookinbox-$(VERSION) && dpkg-buildpackage -us -uc
	@ls obj/deb/*.deb

clean:
	rm -rf obj $(PROGRAMS)

.PHONY: all check bench install uninstall deb clean build-tests analyze format-check fuzz fuzz-build fuzz-regress
# the dependencies of this tree's objects only: obj/deb and obj/deb-prev
# hold whole source trees (the package builds, another version's too)
# whose .d files name headers this tree may not have, which would make
# every object out of date at every make
-include $(shell find obj -path 'obj/deb*' -prune -o -name '*.d' -type f -print 2>/dev/null)
