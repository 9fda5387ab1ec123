build-asan/obj/user/agent/exporter.o: user/agent/exporter.c \
 user/agent/exporter.h user/core/labels.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/http/httpd.h
user/agent/exporter.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/http/httpd.h:
