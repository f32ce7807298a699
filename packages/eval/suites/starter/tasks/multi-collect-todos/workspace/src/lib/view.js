export function render(port) {
  // TODO: escape the title
  console.log(`listening on ${port}`);
  // TODO: show the unread count
}
