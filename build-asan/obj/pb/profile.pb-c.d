build-asan/obj/pb/profile.pb-c.o: build-asan/pb/profile.pb-c.c \
 build-asan/pb/profile.pb-c.h
build-asan/pb/profile.pb-c.h:
