# tfkit - machine-learning pipelines as Unix filters.
#
#   make            build libtfcore (.so and .a), the tools and man pages
#   make check      build and run every test (unit, command, fuzz seeds)
#   make check SANITIZE=1   the same under AddressSanitizer + UBSan
#   make demo       convert the bundled data and show it
#   make install PREFIX=/usr/local DESTDIR=
#   make fuzz       build the libFuzzer targets (clang)
#   make bench      run the benchmarks under bench/
#   make device-kit the build and its libraries for a lent GPU machine
#   make lint       clang-format (check mode) and cppcheck
#
# Missing Debian packages are installed first (mk/deps.sh).

VERSION   := 0.1.0
SOVERSION := 0
PREFIX    ?= /usr/local
DESTDIR   ?=
BINDIR    := $(PREFIX)/bin
LIBDIR    := $(PREFIX)/lib
INCDIR    := $(PREFIX)/include
MANDIR    := $(PREFIX)/share/man
DATADIR   := $(PREFIX)/share/tfkit
PLUGINDIR := $(LIBDIR)/tfkit/plugins

CC        ?= cc
SANITIZE  ?= 0
ifeq ($(SANITIZE),1)
B         := build-san
SANFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
OPT       := -O1 -g
else
B         := build
SANFLAGS  :=
OPT       := -O2 -g
endif

# CUDA: nvcc on PATH, and the CUDA runtime and cuBLAS where nvcc itself
# looks for them (its TOP and target directory, as `nvcc --dryrun` says:
# nvcc is run by its real path, since through a symbolic link it finds
# neither its profile nor the toolkit; a wrapper script is asked, like
# nvcc itself, where its toolkit is).  CUDA=0: never.
NVCC := $(shell command -v nvcc 2>/dev/null)
ifeq ($(CUDA),0)
NVCC :=
endif
ifneq ($(NVCC),)
NVCC      := $(realpath $(NVCC))
CUDA_DRY  := $(shell $(NVCC) --dryrun -c -x cu /dev/null -o /dev/null 2>&1)
CUDA_TOP  := $(patsubst TOP=%,%,$(filter TOP=%,$(CUDA_DRY)))
CUDA_TDIR := $(lastword $(patsubst _TARGET_DIR_=%,%,$(filter _TARGET_DIR_=%,$(CUDA_DRY))))
CUDA_INC  := $(firstword $(dir $(wildcard $(CUDA_TOP)/$(CUDA_TDIR)/include/cuda_runtime_api.h \
                                          $(CUDA_TOP)/include/cuda_runtime_api.h)))
CUDA_LIB  := $(firstword $(dir $(wildcard $(CUDA_TOP)/$(CUDA_TDIR)/lib/libcublas.so \
                                          $(CUDA_TOP)/lib64/libcublas.so $(CUDA_TOP)/lib/libcublas.so)))
ifeq ($(and $(CUDA_INC),$(CUDA_LIB)),)
CUDA_MISSING := $(NVCC): no CUDA runtime header or cuBLAS library under $(or $(CUDA_TOP),its toolkit)
NVCC :=
endif
endif

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-result
CPPFLAGS += -D_GNU_SOURCE -Ilibtfcore/include -I$(B)/gen -MMD -MP \
            -DTF_VERSION='"$(VERSION)"' -DTF_TOOL_VERSION='"$(VERSION)"' -DTF_PLUGINDIR='"$(PLUGINDIR)"' \
            -DTF_CUDA_MODULE='"$(LIBDIR)/tfkit/cuda.so"'
CFLAGS   ?= $(OPT)
CFLAGS   += -std=c11 $(WARN) -pthread $(SANFLAGS)
LIBCFLAGS = $(CFLAGS) -fPIC -fvisibility=hidden -DTF_BUILDING_LIBRARY -Ilibtfcore -I.
LDFLAGS  += -pthread $(SANFLAGS)
LIBS     := -lcsv -larchive -ljpeg -lpng16 -lprotobuf-c -ljansson -lnettle -lnng -lz -lopenblas -ldl -lm

V ?= 0
ifeq ($(V),0)
Q := @
say = printf '  %-7s %s\n' $(1) $(2);
else
Q :=
say =
endif

.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

LIB_SRC   := $(wildcard libtfcore/*.c)
KERN_SRC  := $(wildcard kernels/cpu/*.c)
# The wire formats: tf.train.Example, ONNX, tf-ps's messages, and TF
# Serving's gRPC API (the upstream paths, with two of protobuf's own).
SERVING_PROTOS := $(patsubst libtfcore/proto/%.proto,%,$(wildcard libtfcore/proto/tensorflow/*/*/*.proto \
                  libtfcore/proto/tensorflow_serving/*/*.proto))
SERVICE_PROTOS := tensorflow_serving/apis/prediction_service tensorflow_serving/apis/model_service
PROTOS    := example onnx ps google/protobuf/wrappers google/protobuf/any \
             $(filter-out $(SERVICE_PROTOS),$(SERVING_PROTOS))
PROTO_INC ?= /usr/include
LIB_OBJ   := $(patsubst libtfcore/%.c,$(B)/lib/%.o,$(LIB_SRC)) $(patsubst %,$(B)/lib/%.pb-c.o,$(PROTOS)) \
             $(patsubst kernels/cpu/%.c,$(B)/lib/kernels/%.o,$(KERN_SRC))
PLUGIN_SRC := $(wildcard plugins/ops/*.c plugins/optimizers/*.c)
PLUGIN_SO := $(patsubst %.c,$(B)/lib/tfkit/plugins/%.so,$(notdir $(PLUGIN_SRC)))
LIB_HDR   := $(wildcard libtfcore/include/tf/*.h)
TOOLS     := tf-csv2record tf-img2record tf-records tf-train tf-ps tf-eval tf-export tf-serve
TOOL_BIN  := $(addprefix $(B)/bin/,$(TOOLS))
TOOL_COMMON := $(B)/tools/tool.o
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_RUN  := $(patsubst tests/fuzz/%.c,$(B)/fuzz-run/%,$(FUZZ_SRC))
SOLIB     := $(B)/lib/libtfcore.so.$(SOVERSION)
ALIB      := $(B)/lib/libtfcore.a
MANPAGES  := $(wildcard man/man*/*.[0-9])

.PHONY: all deps deps-check lib tools plugins check unit demo install uninstall \
        clean fuzz fuzz-run bench lint cuda-note check-slow cuda check-gpu device-kit
all: deps lib tools plugins cuda cuda-note

# Every compile waits for the packages (order-only: `make -j` on a fresh
# machine must not run protoc-c or cc before apt-get has put them there).
deps:
	@sh mk/deps.sh build
deps-check: deps
	@sh mk/deps.sh check

cuda-note:
ifneq ($(CUDA_MISSING),)
	@echo "tfkit: $(CUDA_MISSING): building without CUDA (CPU kernels only)"
else ifeq ($(NVCC),)
	@echo "tfkit: nvcc not found: building without CUDA (CPU kernels only)"
else
	@echo "tfkit: nvcc found at $(NVCC) (toolkit $(CUDA_INC:/include/=)): the CUDA device is built ($(B)/lib/tfkit/cuda.so: --device cuda; make check-gpu tests it)"
endif

# The CUDA kernels (kernels/cuda), when nvcc is found (CUDA=0: never):
# the CUDA device, tfkit/cuda.so beside libtfcore (linked with the CUDA
# runtime and cuBLAS, which libtfcore is not: it loads the module when a
# GPU is asked for), and the tests of tests/gpu: the kernels against
# the CPU's (needing only them, the CUDA runtime and cuBLAS) and a whole
# training run on both devices.  CUDA_ARCH: the GPUs to build for
# (Ampere and Hopper, and PTX for newer ones).
CUDA_ARCH ?= --generate-code arch=compute_80,code=[compute_80,sm_80] \
             --generate-code arch=compute_90,code=sm_90
CUDA_OBJ  := $(B)/cuda/kernels.o
KERN_OBJ  := $(patsubst kernels/cpu/%.c,$(B)/lib/kernels/%.o,$(KERN_SRC))
GPU_TEST  := $(B)/tests/gpu/test_kernels
$(CUDA_OBJ): kernels/cuda/kernels.cu kernels/cuda/cuda.h | deps
	@mkdir -p $(@D)
	$(Q)$(call say,NVCC,$<)$(NVCC) -O2 -std=c++17 -Xcompiler -fPIC,-Wall,-Wextra,-Werror -I. -Ilibtfcore/include $(CUDA_ARCH) -c $< -o $@
CUDA_MOD  := $(B)/lib/tfkit/cuda.so
GPU_TRAIN := $(B)/tests/gpu/test_train
$(GPU_TEST): tests/gpu/test_kernels.c tests/gpu/tap.h kernels/cuda/cuda.h kernels/kernels.h $(CUDA_OBJ) $(KERN_OBJ)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CFLAGS) -I. -Ilibtfcore/include -I$(CUDA_INC) -o $@ $< $(CUDA_OBJ) $(KERN_OBJ) \
	    -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lcublas -lcudart -lopenblas -lstdc++ -lm $(LDFLAGS)
$(CUDA_MOD): kernels/cuda/module.c kernels/cuda/cuda.h kernels/kernels.h $(CUDA_OBJ)
	@mkdir -p $(@D)
	$(Q)$(call say,LD,$@)$(CC) $(CPPFLAGS) $(CFLAGS) -I. -shared -fPIC -fvisibility=hidden -o $@ $< $(CUDA_OBJ) \
	    -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lcublas -lcudart -lstdc++ -lm $(LDFLAGS)
GPU_SGEMM := $(B)/bench/gpu-sgemm
$(GPU_SGEMM): bench/gpu-sgemm.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CFLAGS) -I$(CUDA_INC) -o $@ $< -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lcublas -lcudart $(LDFLAGS)
$(GPU_TRAIN): tests/gpu/test_train.c tests/gpu/tap.h $(SOLIB) $(PLUGIN_SO) $(CUDA_MOD)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../../lib' -lm $(LDFLAGS)
ifneq ($(NVCC),)
CPPFLAGS += -DTF_CUDA_BUILT=1
cuda: $(GPU_TEST) $(CUDA_MOD) $(GPU_TRAIN) $(GPU_SGEMM)
check-gpu: deps $(GPU_TEST) $(GPU_TRAIN) tools plugins
	@$(GPU_TEST)
	@$(GPU_TRAIN)
	@B=$(B) sh tests/gpu/models.sh
else
cuda:
check-gpu:
	@echo "1..0 # SKIP nvcc not found: no CUDA kernels built (CUDA=0 or no toolkit)"
endif

lib: $(SOLIB) $(ALIB) $(B)/lib/libtfcore.so $(B)/libtfcore.pc
tools: $(TOOL_BIN)
plugins: $(PLUGIN_SO)

$(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h: libtfcore/proto/%.proto | deps
	@mkdir -p $(B)/gen
	$(Q)$(call say,PROTOC,$<)protoc-c --c_out=$(B)/gen -Ilibtfcore/proto -I$(PROTO_INC) $<
$(B)/gen/google/protobuf/%.pb-c.c $(B)/gen/google/protobuf/%.pb-c.h: | deps
	@mkdir -p $(B)/gen
	$(Q)$(call say,PROTOC,$*.proto)protoc-c --c_out=$(B)/gen -I$(PROTO_INC) $(PROTO_INC)/google/protobuf/$*.proto

$(B)/lib/%.pb-c.o: $(B)/gen/%.pb-c.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(LIBCFLAGS) -Wno-unused-parameter -c -o $@ $<

# Kernels: loops the compiler should vectorize.  -fno-trapping-math lets
# it turn a comparison into a select without AVX-512's masks (the cells'
# clamped exp in rnn.c stayed scalar on AVX2 CPUs); -fno-math-errno lets
# sqrt and sqrtf be the vector square root (the optimizers' updates were
# scalar loops around a libm call).  No result changes: nothing here
# reads the floating-point exception flags or errno, and the square root
# is correctly rounded either way.
$(B)/lib/kernels/%.o: kernels/cpu/%.c | deps
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(LIBCFLAGS) -O3 -fno-trapping-math -fno-math-errno -c -o $@ $<

$(B)/lib/%.o: libtfcore/%.c $(patsubst %,$(B)/gen/%.pb-c.h,$(PROTOS)) | deps
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(LIBCFLAGS) -c -o $@ $<

$(SOLIB): $(LIB_OBJ)
	$(Q)$(call say,LD,$@)$(CC) -shared -Wl,-soname,libtfcore.so.$(SOVERSION) $(LDFLAGS) -o $@ $^ $(LIBS)
$(B)/lib/libtfcore.so: $(SOLIB)
	$(Q)ln -sf libtfcore.so.$(SOVERSION) $@
$(ALIB): $(LIB_OBJ)
	$(Q)$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

# The build tree's (for PKG_CONFIG_PATH=build); make install writes its
# own with the PREFIX it is given.
$(B)/libtfcore.pc: mk/libtfcore.pc.in Makefile
	$(Q)mkdir -p $(@D) && sed -e 's|@PREFIX@|$(PREFIX)|; s|@VERSION@|$(VERSION)|; s|@PLUGINDIR@|$(PLUGINDIR)|; s|@LIBS@|$(LIBS)|' $< > $@

$(B)/tools/%.o: tools/%.c | deps
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Tools link the shared library, found at run time next to them
# ($ORIGIN/../lib), in the build tree and once installed.
$(B)/bin/%: $(B)/tools/%.o $(TOOL_COMMON) $(SOLIB) $(B)/lib/libtfcore.so
	@mkdir -p $(@D)
	$(Q)$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $< $(TOOL_COMMON) -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../lib' -ljansson $(TOOL_LIBS) -lm

# tf-train and tf-ps are one command line (tools/train/, train.h): the
# same sources, built a second time with TFKIT_PS for the ps task.
TRAIN_SRC := $(wildcard tools/train/*.c)
TRAIN_OBJ := $(patsubst tools/train/%.c,$(B)/tools/train/%.o,$(TRAIN_SRC))
TRAIN_PS_OBJ := $(patsubst tools/train/%.c,$(B)/tools/train-ps/%.o,$(TRAIN_SRC))
$(B)/tools/train/%.o: tools/train/%.c | deps
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) -Itools $(CFLAGS) -c -o $@ $<
$(B)/tools/train-ps/%.o: tools/train/%.c | deps
	@mkdir -p $(@D)
	$(Q)$(call say,CC-PS,$<)$(CC) $(CPPFLAGS) -Itools $(CFLAGS) -DTFKIT_PS -c -o $@ $<
$(B)/bin/tf-train: $(TRAIN_OBJ) $(TOOL_COMMON) $(SOLIB) $(B)/lib/libtfcore.so
	@mkdir -p $(@D)
	$(Q)$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $(TRAIN_OBJ) $(TOOL_COMMON) -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../lib' -ljansson -lm
$(B)/bin/tf-ps: $(TRAIN_PS_OBJ) $(TOOL_COMMON) $(SOLIB) $(B)/lib/libtfcore.so
	@mkdir -p $(@D)
	$(Q)$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $(TRAIN_PS_OBJ) $(TOOL_COMMON) -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../lib' -ljansson -lm

# tf-records: a file per group of subcommands under tools/records/.
RECORDS_SRC := $(wildcard tools/records/*.c)
RECORDS_OBJ := $(patsubst tools/records/%.c,$(B)/tools/records/%.o,$(RECORDS_SRC))
$(B)/tools/records/%.o: tools/records/%.c | deps
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) -Itools $(CFLAGS) -c -o $@ $<
$(B)/bin/tf-records: $(RECORDS_OBJ) $(TOOL_COMMON) $(SOLIB) $(B)/lib/libtfcore.so
	@mkdir -p $(@D)
	$(Q)$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $(RECORDS_OBJ) $(TOOL_COMMON) -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../lib' -ljansson $(TOOL_LIBS) -lm

# tf-serve is one file per concern under tools/serve/ (serve.h), with
# the server's own libraries: HTTP/1.1, HTTP/2 (for gRPC) and nng.
SERVE_SRC := $(wildcard tools/serve/*.c)
SERVE_OBJ := $(patsubst tools/serve/%.c,$(B)/tools/serve/%.o,$(SERVE_SRC))
$(B)/tools/serve/%.o: tools/serve/%.c | deps
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
$(B)/bin/tf-serve: $(SERVE_OBJ) $(TOOL_COMMON) $(SOLIB) $(B)/lib/libtfcore.so
	@mkdir -p $(@D)
	$(Q)$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $(SERVE_OBJ) $(TOOL_COMMON) -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../lib' -ljansson -lmicrohttpd -lnghttp2 -lnng -lz -lm

# Plugins: one shared object each, exporting only tf_plugin_entry, linked
# to libtfcore.so two directories up ($ORIGIN/../..).
PLUGIN_LINK = -shared -fPIC -fvisibility=hidden -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../..' -lm
$(B)/lib/tfkit/plugins/%.so: plugins/ops/%.c $(SOLIB) $(B)/lib/libtfcore.so
	@mkdir -p $(@D)
	$(Q)$(call say,PLUGIN,$<)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(PLUGIN_LINK)
$(B)/lib/tfkit/plugins/%.so: plugins/optimizers/%.c $(SOLIB) $(B)/lib/libtfcore.so
	@mkdir -p $(@D)
	$(Q)$(call say,PLUGIN,$<)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(PLUGIN_LINK)

# Tests of the graph and optimizers load the plugins: they link the
# shared library, as the tools do.
SHARED_TESTS := test_graph test_optim test_model
$(addprefix $(B)/tests/,$(SHARED_TESTS)): $(B)/tests/%: tests/unit/%.c tests/unit/test.h $(SOLIB) $(PLUGIN_SO)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit -DTEST_SHARED -o $@ $< -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../lib' -lm $(LDFLAGS)

# Unit tests link the static library so they can reach internals.
$(B)/tests/%: tests/unit/%.c tests/unit/test.h $(ALIB)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -DTF_BUILDING_LIBRARY -Ilibtfcore -I. -Itests/unit -o $@ $< $(ALIB) $(LIBS) $(LDFLAGS)

# The serving targets (REST bodies, gRPC messages) load op plugins: they
# link the shared library, as the tools do.
MODEL_FUZZ := fuzz_serving fuzz_grpc fuzz_export fuzz_spec fuzz_archive
$(addprefix $(B)/fuzz-run/,$(MODEL_FUZZ)): $(B)/fuzz-run/%: tests/fuzz/%.c tests/fuzz/driver.c $(SOLIB) $(PLUGIN_SO)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/driver.c -L$(B)/lib -ltfcore -Wl,-rpath,'$$ORIGIN/../lib' $(LDFLAGS)
# fuzz_ps loads the optimizer plugins and reads the replies (ps.proto).
$(B)/fuzz-run/fuzz_ps: tests/fuzz/fuzz_ps.c tests/fuzz/driver.c $(B)/gen/ps.pb-c.c $(SOLIB) $(PLUGIN_SO)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/driver.c $(B)/gen/ps.pb-c.c -L$(B)/lib -ltfcore -lprotobuf-c -Wl,-rpath,'$$ORIGIN/../lib' $(LDFLAGS)

# Fuzz targets, built with a plain driver that runs each seed once.
$(B)/fuzz-run/%: tests/fuzz/%.c tests/fuzz/driver.c $(ALIB)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/driver.c $(ALIB) $(LIBS) $(LDFLAGS)

# A client of tf-serve's nng endpoint for the command tests.
$(B)/tests/nngreq: tests/cli/nngreq.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -lnng $(LDFLAGS)

# The command tests' image maker: digits as PNG and JPEG files, written
# with libpng and libjpeg themselves.
$(B)/tests/mkimages: tests/cli/mkimages.c
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -ljpeg -lpng16 $(LDFLAGS)

# A client of tf-ps's protocol for the command tests (its own copy of
# the generated message code: the library keeps its symbols hidden).
$(B)/tests/psreq: tests/cli/psreq.c $(B)/gen/ps.pb-c.c $(B)/gen/ps.pb-c.h
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-unused-parameter -o $@ $< $(B)/gen/ps.pb-c.c -lprotobuf-c -lnng $(LDFLAGS)

# The export checks' JavaScript libraries too (mk/node.sh; they skip,
# saying so, where npm cannot be had).
# A CPU stand-in for the CUDA module (tests/unit/fake_gpu.c): the
# device path of libtfcore, tested where there is no GPU.
FAKE_GPU := $(B)/tests/fake-gpu.so
$(FAKE_GPU): tests/unit/fake_gpu.c kernels/kernels.h kernels/slots.h $(KERN_OBJ)
	@mkdir -p $(@D)
	$(Q)$(call say,CC,$<)$(CC) $(CPPFLAGS) $(CFLAGS) -I. -shared -fPIC -fvisibility=hidden -o $@ $< $(KERN_OBJ) -lopenblas -lm $(LDFLAGS)

check: deps-check all $(UNIT_BIN) $(FUZZ_RUN) $(B)/tests/nngreq $(B)/tests/psreq $(B)/tests/mkimages $(FAKE_GPU)
	@sh mk/node.sh
	@B=$(B) SANITIZE=$(SANITIZE) sh tests/run

unit: all $(UNIT_BIN)
	@B=$(B) ONLY=unit sh tests/run

# The long reliability scenarios (tests/reliability/*-slow.bats).
check-slow: deps-check all
	@B=$(B) ONLY=reliability RELIABILITY=slow sh tests/run

demo: deps all
	@B=$(B) sh share/demo.sh

# libFuzzer builds (clang): build/fuzz/fuzz_record etc.
# The library once with the fuzz build's flags, then each target on it.
FUZZ_FLAGS = $(CPPFLAGS) -std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
             -fno-sanitize-recover=undefined -Ilibtfcore -I. -DTF_BUILDING_LIBRARY
FUZZ_OBJ := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(LIB_SRC) $(KERN_SRC)) \
            $(patsubst %,$(B)/fuzz/obj/gen/%.pb-c.o,$(PROTOS))
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
$(B)/fuzz/obj/gen/%.pb-c.o: $(B)/gen/%.pb-c.c
	@mkdir -p $(@D)
	$(Q)$(call say,FUZZCC,$<)clang $(FUZZ_FLAGS) -Wno-unused-parameter -c -o $@ $<
$(B)/fuzz/obj/%.o: %.c $(patsubst %,$(B)/gen/%.pb-c.h,$(PROTOS)) | deps
	@mkdir -p $(@D)
	$(Q)$(call say,FUZZCC,$<)clang $(FUZZ_FLAGS) -c -o $@ $<
$(FUZZ_BIN): $(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	$(Q)$(call say,FUZZ,$@)clang $(FUZZ_FLAGS) -fsanitize=fuzzer -rdynamic -o $@ $< $(FUZZ_OBJ) $(LIBS) -pthread
fuzz: $(ALIB) $(PLUGIN_SO) $(FUZZ_BIN)
	@echo "run e.g.: make fuzz-run SECONDS=60 TARGETS=record (new inputs go in $(B)/fuzz/corpus/record)"

# Every libFuzzer target for SECONDS each (default 60), from its seeds.
SECONDS ?= 60
fuzz-run: fuzz
	@sh mk/fuzz-run.sh $(B) $(SECONDS) $(TARGETS)

bench: all $(B)/tests/mkimages
	@sh mk/deps.sh bench
	@B=$(B) sh bench/csv2record
	@B=$(B) sh bench/train
	@B=$(B) sh bench/cnn
	@B=$(B) sh bench/rnn
	@B=$(B) sh bench/sparse
	@B=$(B) sh bench/serve
	@B=$(B) sh bench/accuracy
	@B=$(B) sh bench/distributed
	@B=$(B) sh bench/resume
	@B=$(B) sh bench/gpu

# The GPU machine's kit (kit/README): the build and what it loads, in
# $(B)/device-kit/ and $(B)/device-kit.tar.xz.
device-kit: all
	@sh mk/device-kit.sh $(B)

lint:
	@sh mk/deps.sh lint
	@sh mk/lint.sh

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/tf \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	  $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(DATADIR)/data $(DESTDIR)$(DATADIR)/examples
	install -m 755 $(TOOL_BIN) $(DESTDIR)$(BINDIR)/
	install -m 755 $(SOLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libtfcore.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libtfcore.so
	install -m 644 $(ALIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(PLUGIN_SO) $(DESTDIR)$(PLUGINDIR)/
	if [ -f $(CUDA_MOD) ]; then install -m 755 $(CUDA_MOD) $(DESTDIR)$(LIBDIR)/tfkit/; fi
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@VERSION@|$(VERSION)|; s|@PLUGINDIR@|$(PLUGINDIR)|; s|@LIBS@|$(LIBS)|' \
	  mk/libtfcore.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libtfcore.pc
	install -m 644 $(LIB_HDR) $(DESTDIR)$(INCDIR)/tf/
	for m in $(MANPAGES); do s=$$(echo $$m | sed 's|.*\.||'); \
	  install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
	install -m 644 share/data/*.csv share/data/heart_scale share/data/README $(DESTDIR)$(DATADIR)/data/
	install -m 755 share/examples/cron-retrain share/examples/online-train share/examples/sweep share/examples/slurm-train \
	  share/examples/mpi-train share/examples/predict_client.py share/examples/train_client.py $(DESTDIR)$(DATADIR)/examples/
	cd libtfcore/proto && for f in example.proto tensorflow/*/*/*.proto tensorflow_serving/*/*.proto; do \
	  install -D -m 644 $$f $(DESTDIR)$(DATADIR)/proto/$$f; done
	install -m 644 share/examples/leaky_relu.c share/examples/leaky.spec share/examples/inception.spec \
	  share/examples/kubernetes.yaml $(DESTDIR)$(DATADIR)/examples/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	for t in $(TOOLS); do install -m 644 share/bash-completion/tfkit \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$t; done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOLS))
	rm -f $(DESTDIR)$(LIBDIR)/libtfcore.* $(DESTDIR)$(LIBDIR)/pkgconfig/libtfcore.pc
	rm -rf $(DESTDIR)$(INCDIR)/tf $(DESTDIR)$(DATADIR) $(DESTDIR)$(PLUGINDIR)
	rm -f $(DESTDIR)$(LIBDIR)/tfkit/cuda.so

clean:
	rm -rf build build-san

-include $(shell find build build-san -name '*.d' -type f 2>/dev/null)
