build-asan/obj/user/http/httpd.o: user/http/httpd.c user/http/httpd.h \
 user/core/parse.h
user/http/httpd.h:
user/core/parse.h:
