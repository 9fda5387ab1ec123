build-asan/obj/user/import/event_map.o: user/import/event_map.c \
 user/import/import.h kb/kb.h user/core/labels.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/core/parse.h
user/import/import.h:
kb/kb.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/core/parse.h:
