export const store = new Map();
