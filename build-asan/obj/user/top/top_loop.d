build-asan/obj/user/top/top_loop.o: user/top/top_loop.c \
 user/core/format.h user/top/top_loop.h user/collect/collector.h \
 user/collect/events.h user/collect/pmu.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 bpf/topdown.h user/collect/sampler.h user/core/profile.h kb/engine.h \
 kb/kb.h user/top/top_screen.h user/top/top_view.h
user/core/format.h:
user/top/top_loop.h:
user/collect/collector.h:
user/collect/events.h:
user/collect/pmu.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
bpf/topdown.h:
user/collect/sampler.h:
user/core/profile.h:
kb/engine.h:
kb/kb.h:
user/top/top_screen.h:
user/top/top_view.h:
