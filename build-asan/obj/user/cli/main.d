build-asan/obj/user/cli/main.o: user/cli/main.c user/cli/commands.h \
 user/core/format.h user/core/fileio.h user/core/version.h
user/cli/commands.h:
user/core/format.h:
user/core/fileio.h:
user/core/version.h:
