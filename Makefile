# `make` builds the release products, `make install` (or `sudo make install`) installs them under
# PREFIX (default /usr/local; DESTDIR stages for a package), `make uninstall` removes them. The work
# is scripts/install's; make only adds timestamps, so `sudo make install` after `make` runs no
# build as root.
PREFIX ?= /usr/local
BUILD_DIR = .build/release
PRODUCTS = $(BUILD_DIR)/latchkey $(BUILD_DIR)/latchkey-cli

all: $(PRODUCTS)

$(PRODUCTS) &: Package.swift $(shell find Sources -type f)
	scripts/install --build-only
	touch $(PRODUCTS)

install: $(PRODUCTS)
	scripts/install --from $(BUILD_DIR) "$(PREFIX)"

uninstall:
	scripts/install --uninstall "$(PREFIX)"

.PHONY: all install uninstall
