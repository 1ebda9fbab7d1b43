# What `cmake --install` puts beside the cmc binary (tools/) and the plugin
# header (the top CMakeLists.txt), and how `cpack -G DEB` packs it all:
#
#   bin/cmc                                   stripped; its debug symbols in
#                                             the -dbgsym package
#   include/cmc/property.h                    the plugin ABI
#   share/pkgconfig/cmc-property.pc           Cflags for a plugin's build
#   share/man/man1/cmc.1.gz, cmc-check.1.gz   help2man, from the built cmc
#   share/bash-completion/completions/cmc
#   share/doc/cmc/                            README.md, CHANGELOG.md,
#                                             copyright (LICENSE), examples/,
#                                             changelog.gz (Debian's format)
#
# scripts/package_test.sh runs lintian on the package: it must report no
# error.
#
# Included last: CPack packs the install() rules made before it.

# The man pages: help2man reads `cmc --help` and `cmc SUBCOMMAND --help`
# of the cmc just built, so they say what this build's options are. Without
# help2man (Debian's package of that name) there are none, and the package
# test (scripts/package_test.sh) fails on `man -w cmc`. The sanitizer and
# fuzzing builds are not packaged and make none: their cmc may need the
# environment of their scripts to run (tsan.sh's TBB).
find_program(HELP2MAN help2man)
if(CMC_SANITIZE OR CMC_TSAN OR CMC_FUZZ)
  # no man pages
elseif(HELP2MAN)
  set(man_dir ${CMAKE_CURRENT_BINARY_DIR}/man)
  set(man_pages "")
  # The SEE ALSO section of every page.
  set(see_also ${PROJECT_SOURCE_DIR}/packaging/see_also.h2m)
  set(summary_cmc "model checker for unmodified Linux servers")
  set(summary_check "explore every order of a server's client messages")
  set(summary_replay "run a counterexample once and show what the target did")
  set(summary_scan "list the system call instructions of a binary")
  set(summary_explore "take a target's steps by hand")
  foreach(page IN ITEMS cmc check replay scan explore)
    if(page STREQUAL "cmc")
      set(name cmc)
      set(help_option --help)
    else()
      set(name cmc-${page})
      set(help_option "${page} --help")
    endif()
    set(summary ${summary_${page}})
    add_custom_command(
      OUTPUT ${man_dir}/${name}.1.gz
      COMMAND ${HELP2MAN} --no-info
              --help-option=${help_option}
              "--version-string=${name} ${PROJECT_VERSION}"
              --name=${summary} --section=1 --include=${see_also}
              --output=${man_dir}/${name}.1 $<TARGET_FILE:cmc>
      COMMAND gzip -9nf ${man_dir}/${name}.1
      DEPENDS cmc ${see_also}
      COMMENT "help2man ${name}.1"
      VERBATIM)
    list(APPEND man_pages ${man_dir}/${name}.1.gz)
  endforeach()
  add_custom_target(cmc_man ALL DEPENDS ${man_pages})
  install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(WARNING "help2man not found: no man pages (apt-get install "
                  "help2man, or run scripts/setup.sh as root)")
endif()

install(FILES packaging/bash-completion/cmc
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)

# The pkg-config file is written at install time: its prefix is the one
# installed to, /usr in the package (CPack installs with its own prefix),
# /usr/local by default for `cmake --install`. Arch-independent (a header
# only), so in share/pkgconfig, which pkg-config searches.
install(CODE "
  set(CMC_VERSION ${PROJECT_VERSION})
  set(CMC_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
  configure_file(\"${PROJECT_SOURCE_DIR}/packaging/cmc-property.pc.in\"
                 \"${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/cmc-property.pc\"
                 @ONLY)
  file(INSTALL
       \"${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/cmc-property.pc\"
       DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATAROOTDIR}/pkgconfig\")
")

# Debian wants a maintainer's name and mail address in the package and its
# changelog (lintian: malformed-contact). The project has no mailing list
# yet: the default is a placeholder in the .invalid domain (RFC 2606),
# which no mail reaches; who publishes a package sets theirs.
set(CMC_PACKAGE_MAINTAINER "the cmc developers <maintainers@cmc.invalid>"
    CACHE STRING "The Debian package's maintainer: NAME <ADDRESS>")

# A native package (its version has no Debian revision) has its Debian
# changelog as changelog.gz (lintian: no-changelog): one entry, for this
# version, pointing at CHANGELOG.md; dated when configured, or at
# SOURCE_DATE_EPOCH.
string(TIMESTAMP CMC_PACKAGE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(changelog ${CMAKE_CURRENT_BINARY_DIR}/packaging/changelog)
configure_file(packaging/changelog.in ${changelog} @ONLY)
add_custom_command(
  OUTPUT ${changelog}.gz
  COMMAND gzip -9nkf ${changelog}
  DEPENDS ${changelog}
  COMMENT "gzip changelog"
  VERBATIM)
add_custom_target(cmc_changelog ALL DEPENDS ${changelog}.gz)

set(doc_dir ${CMAKE_INSTALL_DATAROOTDIR}/doc/cmc)
install(FILES README.md CHANGELOG.md ${changelog}.gz DESTINATION ${doc_dir})
install(FILES LICENSE DESTINATION ${doc_dir} RENAME copyright)
install(FILES docs/report-format.md DESTINATION ${doc_dir})
# The reports' JSON Schemas are data a validator reads, not documentation:
# outside /usr/share/doc, which minimal systems leave out (dpkg
# path-exclude).
install(FILES docs/schema/check.schema.json docs/schema/replay.schema.json
              docs/schema/scan.schema.json
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/cmc/schema)
# The example plugins and the demo servers they check, as sources, with a
# Makefile that builds them against the installed header.
install(FILES demo/properties/beanstalkd_reserve.c
              demo/properties/list_sticky.c demo/properties/lock_grant.c
              demo/properties/redis_lock.c demo/properties/words.h
        DESTINATION ${doc_dir}/examples/properties)
install(FILES demo/kv.c demo/heap_kv.c demo/lock_server.c
        DESTINATION ${doc_dir}/examples)
install(FILES packaging/examples.mk DESTINATION ${doc_dir}/examples
        RENAME Makefile)

set(CPACK_PACKAGE_NAME cmc)
set(CPACK_PACKAGE_VENDOR "the cmc developers")
set(CPACK_PACKAGE_CONTACT ${CMC_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "model checker for unmodified Linux servers")
# Lines of at most 80 characters (lintian: extended-description-line-too-long).
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "cmc runs a TCP server binary under ptrace and seccomp, sends it every\n"
  "order of a few client messages and checks an invariant over its memory\n"
  "or its replies (built-in or a property plugin) in every state reached,\n"
  "with no change to the server: the shortest message sequence that\n"
  "breaks it, or how many distinct states hold.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # cmc_0.25.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The libraries cmc links (dpkg-shlibdeps, from the installed binary).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# A plugin is built with a C compiler and pkg-config; man reads the pages.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gcc | c-compiler, pkg-config, man-db")
# CPack strips cmc itself (objcopy --strip-unneeded) into
# cmc-dbgsym_VERSION_ARCH.ddeb, by build ID (usr/lib/debug/.build-id/):
# the build must keep its debug information (RelWithDebInfo, the default).
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_GENERATOR DEB)
include(CPack)
