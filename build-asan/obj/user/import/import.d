build-asan/obj/user/import/import.o: user/import/import.c kb/engine.h \
 kb/kb.h user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h user/import/import.h kb/kb.h user/core/labels.h
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/import/import.h:
kb/kb.h:
user/core/labels.h:
