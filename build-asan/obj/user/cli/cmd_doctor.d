build-asan/obj/user/cli/cmd_doctor.o: user/cli/cmd_doctor.c \
 user/cli/cli_options.h storage/store_open.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/cli/commands.h \
 user/doctor/doctor.h
user/cli/cli_options.h:
storage/store_open.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/cli/commands.h:
user/doctor/doctor.h:
