build-asan/obj/kb/engine.o: kb/engine.c kb/engine.h kb/kb.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h kb/expr.h
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
kb/expr.h:
