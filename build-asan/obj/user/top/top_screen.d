build-asan/obj/user/top/top_screen.o: user/top/top_screen.c \
 user/top/top_screen.h user/top/top_view.h kb/engine.h kb/kb.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h
user/top/top_screen.h:
user/top/top_view.h:
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
