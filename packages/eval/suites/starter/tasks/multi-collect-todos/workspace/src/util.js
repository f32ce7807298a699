export const noop = () => {};
// TODO: remove noop once nothing uses it
