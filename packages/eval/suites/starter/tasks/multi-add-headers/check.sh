# Each note starts with "# Note NN" and keeps its original lines below it; no note is missing.
set -e
count=0
for original in "$EVAL_TASK_DIR"/workspace/notes/note-*.txt; do
  name=$(basename "$original")
  n=${name#note-}
  n=${n%.txt}
  test "$(head -n 1 "notes/$name")" = "# Note $n"
  tail -n +2 "notes/$name" | diff - "$original" >/dev/null
  count=$((count + 1))
done
test "$count" = 8
