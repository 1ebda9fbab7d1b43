#!/usr/bin/env bash
# Lint as errors. clang-format (.clang-format) on every C/C++ file of the
# tree; clang-tidy (.clang-tidy, every warning an error) on the C/C++ files
# changed since a base commit (the work tree included), with the compile
# commands of build-lint/ (setup.sh's, configured without precompiled
# headers, which clang cannot read when GCC made them, and without unity
# batches, whose commands name no source file) or, for the harnesses,
# build-lint-fuzz/ (fuzz.sh's, without unity batches), both configured
# here. A changed header is tidied
# through a source file that includes it.
#
# The base: CMC_LINT_BASE, else the commit in .ci/lint-base. CI runs on a
# fresh clone of main, which knows no previous landing, and HEAD~1 is one
# commit of a landing that merges several; tidying the whole tree costs
# about 30 s of CPU a file, 35-40 min for its ~150 sources on 2 cores, most
# of CI's time. So whoever lands a change on main moves .ci/lint-base to the
# main it landed on, once CI is green: until then CI tidies every file
# changed since the base it names, never fewer than the landing's. CI has
# never tidied the files unchanged since 701f1fd, the first base (by hand
# only, if at all): `CMC_LINT_BASE=$(git hash-object -t tree /dev/null)`
# tidies every file.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${CMC_LINT_BASE:-$(cat .ci/lint-base)}
builds=(build-lint build-lint-fuzz)

if ! git cat-file -e "$base^{tree}" 2>/dev/null; then
  if [[ -z ${CMC_LINT_BASE:-} && $(git rev-parse --is-shallow-repository) == \
    true ]] && git cat-file -e HEAD~1 2>/dev/null; then
    # A shallow clone has no older base: the last commit's files at least.
    echo "lint: the base $base is not in this shallow clone:" \
      "clang-tidy on the files changed since HEAD~1 only" >&2
    base=HEAD~1
  else
    echo "lint: the base $base is no commit or tree of this clone" >&2
    exit 1
  fi
fi
# The packages (clang-format and clang-tidy among them), the compile commands.
CMC_BUILD_DIR=build-lint CMC_CMAKE_FLAGS="-DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON \
-DCMAKE_UNITY_BUILD=OFF" scripts/setup.sh --configure
CMC_FUZZ_BUILD_DIR=build-lint-fuzz CMC_CMAKE_FLAGS=-DCMAKE_UNITY_BUILD=OFF \
  scripts/fuzz.sh --configure

mapfile -d '' all < <(git ls-files -z -- '*.c' '*.cc' '*.h')
clang-format --dry-run -Werror "${all[@]}"
echo "lint: clang-format: ${#all[@]} files formatted"

# build_of FILE: the first build whose compile commands compile FILE.
build_of() {
  for build in "${builds[@]}"; do
    grep -q -F "\"$PWD/$1\"" "$build/compile_commands.json" &&
      { echo "$build"; return; }
  done
}

# includers HEADER PATTERNS...: the files of PATTERNS that include the
# header by its path, its path below include/, or (in its own directory) its
# name.
includers() {
  local header=$1 dir=${1%/*}
  shift
  { git grep -l -F "#include \"$header\"" -- "$@"
    git grep -l -F "#include \"${header#include/}\"" -- "$@"
    git grep -l -F "#include \"${header##*/}\"" -- "${@/#/$dir/}"
    true # no match is no error (pipefail)
  } | sort -u
}

# source_of HEADER: a source file that compiles the header: its pair, else
# one that includes it, else (a header only headers include) a source of
# a header that includes it; clang-tidy's HeaderFilterRegex reports the
# headers a source includes, directly or not.
source_of() {
  local pair=${1%.h} header source
  for candidate in "$pair.cc" "$pair.c"; do
    [[ -f $candidate ]] && { echo "$candidate"; return; }
  done
  source=$(includers "$1" '*.cc' '*.c' | sed -n 1p)
  [[ -n $source ]] && { echo "$source"; return; }
  for header in $(includers "$1" '*.h'); do
    source=$(source_of "$header")
    [[ -n $source ]] && { echo "$source"; return; }
  done
}

# only_includes_changed OLD NEW: the file, once OLD at the base (moved or
# not), differs from it in its #include lines alone (a header it includes
# moved to another folder): clang-tidy's checks would say what they said
# at the base, so it is not tidied again.
only_includes_changed() {
  cmp -s <(git show "$base:$1" | grep -v '^#include ') \
    <(grep -v '^#include ' "$2")
}

changed=()
moved=0
while IFS=$'\t' read -r status old new; do
  [[ $status == R* ]] || new=$old
  if [[ $status != A ]] && only_includes_changed "$old" "$new"; then
    moved=$((moved + 1))
    continue
  fi
  changed+=("$new")
done < <(git diff --name-status -M --diff-filter=d "$base" -- \
  '*.c' '*.cc' '*.h')
((moved)) && echo "lint: $moved files changed since the base in their" \
  "#include lines only: not tidied again"
jobs=()
declare -A seen
for file in "${changed[@]}"; do
  if [[ $file == *.h ]]; then
    header=$file file=$(source_of "$file")
    [[ -z $file ]] && echo "lint: $header is compiled by no source: not tidied"
  fi
  [[ -z $file || -n ${seen[$file]:-} ]] && continue
  seen[$file]=1
  build=$(build_of "$file")
  if [[ -z $build ]]; then
    echo "lint: $file is compiled by none of ${builds[*]}" >&2
    exit 1
  fi
  jobs+=("$build" "$file")
done
((${#jobs[@]})) && printf '%s\0' "${jobs[@]}" | xargs -0 -n 2 -P 2 bash -c \
  'clang-tidy --quiet -p "$0" --warnings-as-errors="*" "$1" \
    2> >(grep -v "warnings generated" >&2)'
echo "lint: clang-tidy: $((${#jobs[@]} / 2)) files changed since" \
  "$(git rev-parse --short "$base"), clean"
