# bench/select.sh -- sourced by run.sh and icount.sh: the ONLY case filter.
# Whether a case name is selected by ONLY (same rules as the bench program):
# comma-separated substrings; an item ending in $ must match the whole name.
selected() {
  local name=$1 item
  [ -z "$ONLY" ] && return 0
  IFS=',' read -r -a items <<<"$ONLY"
  for item in "${items[@]}"; do
    [ -z "$item" ] && continue
    if [[ $item == *'$' ]]; then
      [ "$name" = "${item%\$}" ] && return 0
    elif [[ $name == *"$item"* ]]; then
      return 0
    fi
  done
  return 1
}
