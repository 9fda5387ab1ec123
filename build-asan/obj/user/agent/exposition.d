build-asan/obj/user/agent/exposition.o: user/agent/exposition.c \
 user/core/array.h kb/engine.h kb/kb.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/agent/exporter.h \
 user/core/labels.h user/core/utf8.h
user/core/array.h:
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/agent/exporter.h:
user/core/labels.h:
user/core/utf8.h:
