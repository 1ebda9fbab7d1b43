# Builds cmc's demo servers and example property plugins against the
# installed header (pkg-config cmc-property). Copy this directory somewhere
# writable first:
#
#   cp -r /usr/share/doc/cmc/examples cmc-examples && make -C cmc-examples
#   cmc check --max-depth 3 --property cmc-examples/properties/lock_grant.so \
#     --client A -m 'LOCK\n' -m 'UNLOCK\n' --client B -m 'LOCK\n' \
#     -m 'UNLOCK\n' -- cmc-examples/lock_server_bug 7000

CFLAGS ?= -O1 -g
PLUGIN_CFLAGS := $(shell pkg-config --cflags cmc-property) -fPIC \
  -fvisibility=hidden
SERVERS := kv kv_bug heap_kv heap_kv_bug lock_server lock_server_bug
PLUGINS := $(patsubst %.c,%.so,$(wildcard properties/*.c))

all: $(SERVERS) $(PLUGINS)

%_bug: %.c
	$(CC) $(CFLAGS) -DBUG -o $@ $<

%: %.c
	$(CC) $(CFLAGS) -o $@ $<

properties/%.so: properties/%.c properties/words.h
	$(CC) $(CFLAGS) $(PLUGIN_CFLAGS) -shared -o $@ $<

clean:
	rm -f $(SERVERS) $(PLUGINS)

.PHONY: all clean
