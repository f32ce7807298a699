/**
 * Everyday verbs → the operation verbs tool names and descriptions are written with, for
 * capability and tool search (`TextIndexOptions.synonyms`). A request says "show me all
 * escalation policies", "trigger the workflow", "book a table"; tools are called
 * `list_escalation_policies`, `start_incident_workflow`, `ReserveRestaurant`. The table is
 * field-general (what REST and MCP APIs call their operations: create, get/list, update,
 * delete, start/stop, find; and the one everyday pair, book/reserve, that travel and
 * restaurant APIs split), one direction (an API word does not ask for everyday words, so
 * `get_x` and `list_x` stay apart), and small on purpose: each entry is a synonym in any
 * field, not a word some data set needed. A synonym matches as another form of the word
 * (`SYNONYM_WEIGHT`), only when the index holds it. Measured on every retrieval set
 * (docs/search.md, "Operation verbs").
 */
export const OPERATION_SYNONYMS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  // Reading: "show me", "display", "view" ask to get one or list many.
  show: ["list", "get"],
  display: ["list", "get"],
  view: ["list", "get"],
  fetch: ["get"],
  retrieve: ["get"],
  // Making.
  add: ["create"],
  new: ["create"],
  make: ["create"],
  insert: ["create"],
  // Changing.
  edit: ["update"],
  modify: ["update"],
  change: ["update"],
  patch: ["update"],
  // Removing.
  remove: ["delete"],
  drop: ["delete"],
  erase: ["delete"],
  destroy: ["delete"],
  // Starting and stopping.
  trigger: ["start"],
  launch: ["start"],
  begin: ["start"],
  run: ["start", "execute"],
  execute: ["run", "start"],
  halt: ["stop"],
  terminate: ["stop"],
  // Finding.
  search: ["find"],
  lookup: ["find"],
  // Booking.
  book: ["reserve"],
  reserve: ["book"],
});
