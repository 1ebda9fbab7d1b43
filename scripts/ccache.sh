# Sourced by setup.sh and fuzz.sh: compile through ccache, whose results
# hold for any build tree of any clone (paths below the clone are hashed
# relative to it), so a build that another tree or an earlier clone on this
# machine compiled already (CI's clone of a session's work) is mostly
# cache hits. As root the cache is /var/cache/cmc/ccache, else ccache's own.
# CMC_CCACHE=0 builds without it.
ccache_flags=()
if [[ ${CMC_CCACHE:-1} != 0 ]] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
  # The precompiled headers of the test executables can be cached with
  # these (ccache's manual, "Precompiled headers"); a fresh clone's files
  # are all new, which the mtime checks would take for files still being
  # written.
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  [[ $(id -u) -eq 0 ]] && export CCACHE_DIR=${CCACHE_DIR:-/var/cache/cmc/ccache}
  ccache_flags=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
