build-asan/obj/user/agent/agent.o: user/agent/agent.c user/agent/agent.h \
 user/collect/events.h user/core/labels.h user/collect/procmatch.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h storage/store_open.h storage/storage.h \
 user/collect/pmu.h user/collect/events.h bpf/topdown.h \
 user/collect/collect_setup.h kb/engine.h kb/kb.h user/collect/sampler.h \
 user/core/profile.h user/collect/tma_events.h user/core/cpuinfo.h \
 kb/kb.h user/collect/pmu.h user/collect/collector.h \
 user/agent/exporter.h user/core/format.h user/locate/locate.h \
 user/locate/symbolize.h user/agent/rotation.h user/agent/sink.h \
 user/agent/writer.h
user/agent/agent.h:
user/collect/events.h:
user/core/labels.h:
user/collect/procmatch.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
storage/store_open.h:
storage/storage.h:
user/collect/pmu.h:
user/collect/events.h:
bpf/topdown.h:
user/collect/collect_setup.h:
kb/engine.h:
kb/kb.h:
user/collect/sampler.h:
user/core/profile.h:
user/collect/tma_events.h:
user/core/cpuinfo.h:
kb/kb.h:
user/collect/pmu.h:
user/collect/collector.h:
user/agent/exporter.h:
user/core/format.h:
user/locate/locate.h:
user/locate/symbolize.h:
user/agent/rotation.h:
user/agent/sink.h:
user/agent/writer.h:
