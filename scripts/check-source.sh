#!/usr/bin/env bash
# Checks the source itself, before anything is built: every C++ file is formatted by .clang-format, and the
# layers keep to their direction (files -> parser -> store -> views):
#   core/  includes nothing of store/, tui/ or cli/;
#   store/ includes nothing of tui/ or cli/; tui/ and cli/ include nothing of each other;
#   curses only in tui/; SQLite only in store/ (tests may open a store with sqlite3 to look inside it);
# inside core/, the folders keep to one order (a folder includes its own and lower ones only):
#   text files args signals version log (and core/*.hpp)  <  model  <  parse tail layout watch series
#   <  detect  <  ingest config export notify sim  <  judge
# no source file but tests' is longer than 700 lines (split it by concern);
# and the README stays a front page: at most 150 lines, its links to docs/ whole.
# Prints every offence with its file and line; exits 1 if there is any.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-source: clang-format is missing (bash scripts/setup-deps.sh)" >&2; exit 2; }
failed=0

mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' '*.c')
if ! clang-format --dry-run -Werror "${sources[@]}"; then
    echo "check-source: the files above are not formatted; run: clang-format -i \$(git ls-files '*.cpp' '*.hpp')" >&2
    failed=1
fi

# forbid PATTERN WHY PATHSPEC...: every line of the tracked files in PATHSPEC matching PATTERN is an offence.
forbid() {
    local pattern=$1 why=$2
    shift 2
    local hits
    hits=$(git grep -nE "$pattern" -- "$@")
    if [[ -n $hits ]]; then
        echo "check-source: $why:" >&2
        echo "$hits" >&2
        failed=1
    fi
}
forbid '^\s*#\s*include\s*"(store|tui|cli)/' 'core/ includes an upper layer' core
forbid '^\s*#\s*include\s*"(tui|cli)/' 'store/ includes a view' store
forbid '^\s*#\s*include\s*"cli/' 'tui/ includes cli/' tui
forbid '^\s*#\s*include\s*"tui/' 'cli/ includes tui/' cli
forbid '^\s*#\s*include\s*[<"](n?curses|ncursesw/|term\.h)' 'curses outside tui/' core store cli
forbid '^\s*#\s*include\s*[<"]sqlite3' 'SQLite outside store/' core tui cli
forbid '"(SELECT|INSERT INTO|CREATE TABLE|CREATE INDEX|DELETE FROM|PRAGMA) ' 'SQL outside store/' core tui cli

# core/'s internal order: "core/<folder>/x.hpp" included from a lower folder is an offence.
core_level() {
    case $1 in
        text | files | args | signals | version | log | "") echo 0 ;;
        model) echo 1 ;;
        parse | tail | layout | watch | series) echo 2 ;;
        detect) echo 3 ;;
        ingest | config | export | notify | sim) echo 4 ;;
        judge) echo 5 ;;
        *) echo 9 ;;  # a new folder: place it in this list
    esac
}
while IFS=: read -r file line text; do
    from=$(echo "$file" | awk -F/ 'NF>2 {print $2}')
    to=$(echo "$text" | sed -E 's|.*"core/([^"]*)".*|\1|' | awk -F/ 'NF>1 {print $1}')
    if (( $(core_level "$to") > $(core_level "$from") )); then
        echo "check-source: $file:$line: core/${from:-.} includes core/$to, which comes after it in core/'s order" >&2
        failed=1
    fi
done < <(git grep -nE '^\s*#\s*include\s*"core/' -- 'core/*.cpp' 'core/*.hpp' 'core/*.in')

# Files of one concern stay readable: none but the tests' past 700 lines.
while read -r count file; do
    [[ $file == total ]] && continue
    if (( count > 700 )); then
        echo "check-source: $file has $count lines; split it by concern (700 at most; tests aside)" >&2
        failed=1
    fi
done < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' '*.c' | grep -v '^tests/' | xargs wc -l)

# The README is the front page (at most 150 lines); every document it links to exists.
readme_lines=$(wc -l < README.md)
if (( readme_lines > 150 )); then
    echo "check-source: README.md has $readme_lines lines; the front page keeps to 150 (the rest belongs in docs/)" >&2
    failed=1
fi
for doc in $(grep -o '](docs/[^)]*)' README.md | sed 's/^](//; s/)$//'); do
    [[ -f $doc ]] || { echo "check-source: README.md links to $doc, which does not exist" >&2; failed=1; }
done

if [[ $failed == 0 ]]; then echo "check-source: ${#sources[@]} files formatted; layers and core/'s folders keep to their order; none past 700 lines; README $readme_lines lines"; fi
exit $failed
