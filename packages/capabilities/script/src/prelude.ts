/**
 * What a script sees besides the language itself, written in the script's own language and
 * evaluated inside the engine before the script: `tools` and `console`. Only strings cross
 * to the host — a call's name and its arguments as JSON text one way, a reply as JSON text
 * the other — so no host object, prototype or function is ever reachable from inside.
 *
 * The prelude is a function of the host entry points — `hostCall(nameJson, argsJson)` (the
 * reply text at once for a refusal, else a call number whose reply the host later hands to
 * `deliver`), `hostLog(text)` and `hostSettled()` (the script's promise has settled) — and
 * returns `finish`, `describe`, `deliver` and `watch`. `finish` and `describe` turn the
 * script's result or error into text inside the engine (a getter, a Proxy or a `toJSON` in a
 * returned value runs there, under the script's limits).
 *
 * The script runs after the prelude and may replace any prototype method or global. What
 * the prelude does at run time therefore uses only what it captured here at its start
 * (called through the captured Reflect.apply), never a method looked up at call time.
 */
export const PRELUDE = String.raw`(function (hostCall, hostLog, hostSettled) {
  "use strict";
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const ErrorClass = Error;
  const TypeErrorClass = TypeError;
  const ProxyClass = Proxy;
  const freeze = Object.freeze;
  const create = Object.create;
  const ownKeys = Object.keys;
  const defineProperty = Object.defineProperty;
  const StringOf = String;
  const PromiseClass = Promise;
  const MapClass = Map;
  // Calls in flight by number: the host answers each through deliver(number, replyText).
  const waiting = new MapClass();
  const mapGet = MapClass.prototype.get;
  const mapSet = MapClass.prototype.set;
  const mapDelete = MapClass.prototype.delete;
  const apply = Reflect.apply;
  const join = Array.prototype.join;
  const slice = String.prototype.slice;

  function encode(name, args) {
    if (args === undefined) return "{}";
    const text = stringify(args);
    if (typeof text !== "string")
      throw new TypeErrorClass("The arguments of " + name + " must be an object, e.g. { path: \"notes.txt\" }.");
    return text;
  }

  function decode(text) {
    const reply = parse(text);
    if (reply.ok) return reply.value;
    const info = reply.error;
    const error = new ErrorClass(info.message);
    error.code = info.code;
    error.tool = info.tool;
    if (info.property !== undefined) error.property = info.property;
    if (info.result !== undefined) error.result = info.result;
    throw error;
  }

  async function call(name, args) {
    if (typeof name !== "string")
      throw new TypeErrorClass("tools.call(name, args): name must be a string, e.g. tools.call(\"fs.read\", { path: \"notes.txt\" }).");
    // A refusal comes back at once as text; a call in flight as its number. The name crosses
    // as JSON too: the host reads a string as a C string, which would end at a NUL in it.
    const reply = hostCall(stringify(name), encode(name, args));
    if (typeof reply === "string") return decode(reply);
    return decode(await new PromiseClass((resolve) => apply(mapSet, waiting, [reply, resolve])));
  }

  function deliver(number, text) {
    const resolve = apply(mapGet, waiting, [number]);
    apply(mapDelete, waiting, [number]);
    if (resolve) resolve(text);
  }

  // Tells the host when the script's promise settles, so it need not ask after every job.
  async function watch(promise) {
    try {
      await promise;
    } catch {}
    hostSettled();
  }

  // Names JavaScript itself reads from objects are never tools: awaiting tools or tools.fs
  // (then), String(tools.fs) and template strings (toString, valueOf), JSON.stringify
  // (toJSON) must not call anything. A tool with such a name is still reached by tools.call.
  // (Compared one by one: the script may have replaced Array.prototype.includes.)
  const notATool = (key) =>
    typeof key !== "string" || key === "then" || key === "toString" || key === "valueOf" ||
    key === "toJSON" || key === "toLocaleString" || key === "constructor";
  const readOnly = {
    set() { return false; },
    defineProperty() { return false; },
    deleteProperty() { return false; },
    setPrototypeOf() { return false; },
  };

  // A Proxy is made at each read of tools.<cap>: one frozen target shared by all of them, and
  // the traps listed rather than spread (copying them each time was most of that read's cost).
  const groupTarget = freeze(create(null));
  const { set, defineProperty: define, deleteProperty, setPrototypeOf } = readOnly;

  function group(capability) {
    return new ProxyClass(groupTarget, {
      set,
      defineProperty: define,
      deleteProperty,
      setPrototypeOf,
      get(_, verb) {
        if (notATool(verb)) return undefined;
        const name = capability + "." + verb;
        return (args) => call(name, args);
      },
    });
  }

  const tools = new ProxyClass(freeze(create(null)), {
    ...readOnly,
    get(_, key) {
      if (key === "call") return call;
      if (notATool(key)) return undefined;
      return group(key);
    },
  });

  function show(value) {
    if (typeof value === "string") return value;
    try {
      const text = stringify(value);
      return text === undefined ? StringOf(value) : text;
    } catch {
      try {
        return StringOf(value);
      } catch {
        return "[unprintable value]";
      }
    }
  }
  // A line is cut here, before it crosses: a flood of huge lines costs the host nothing.
  // (values is this call's own array: writing its own elements runs no setter of the script's.)
  const MAX_LINE = 16384;
  const log = (...values) => {
    for (let i = 0; i < values.length; i++) values[i] = show(values[i]);
    const line = apply(join, values, [" "]);
    hostLog(line.length > MAX_LINE ? apply(slice, line, [0, MAX_LINE]) + " …[line cut]" : line);
  };
  const console = freeze({ log, info: log, debug: log, warn: log, error: log });

  const fixed = { enumerable: false, configurable: false, writable: false };
  defineProperty(globalThis, "tools", { ...fixed, value: tools });
  defineProperty(globalThis, "console", { ...fixed, value: console });

  // Replies to the host are built on objects without a prototype: a toJSON or getter the
  // script put on Object.prototype cannot change what they say.
  // (An index loop: for-of would call the array iterator, which the script may replace.)
  function record(fields) {
    const out = create(null);
    const keys = ownKeys(fields);
    for (let i = 0; i < keys.length; i++) out[keys[i]] = fields[keys[i]];
    return stringify(out);
  }

  // The script's result as JSON text (no text when it returned nothing).
  function finish(value) {
    if (value === undefined) return record({ ok: true });
    try {
      const text = stringify(value);
      if (typeof text !== "string") return record({ ok: false, message: "the returned value is not JSON (a " + typeof value + ")" });
      return record({ ok: true, text });
    } catch (error) {
      return record({ ok: false, message: "the returned value could not be turned into JSON: " + show(error && error.message) });
    }
  }

  // What the script threw, as JSON text: message, code/property of a tool error, and where.
  function describe(error) {
    const out = create(null);
    try {
      if (error instanceof ErrorClass) {
        out.message = StringOf(error.name) + ": " + StringOf(error.message);
        if (typeof error.code === "string") out.code = error.code;
        if (typeof error.property === "string") out.property = error.property;
        if (typeof error.tool === "string") out.tool = error.tool;
        if (typeof error.stack === "string") out.stack = error.stack;
      } else {
        out.message = "the script threw a non-Error value: " + show(error);
      }
    } catch {
      out.message = "the script threw a value that could not be described";
    }
    for (const key in out) if (typeof out[key] !== "string") out[key] = "";
    return stringify(out);
  }

  return [finish, describe, deliver, watch];
})`;

/**
 * The script's source as the body of an async function, on the first line so line numbers
 * match the source (columns on line 1 are shifted by the prefix; the host subtracts it).
 */
export const BODY_PREFIX = "(async function () {";
export const BODY_SUFFIX = "\n})";
export const SCRIPT_FILE = "script.js";
