import { urlPolicy } from "@capgate/net-guard";
import { defineCapability } from "@capgate/tools";
import { fetchPage } from "./fetch-tool.js";
import { manifest } from "./manifest.js";
import { checkRequestHeaders } from "./request-headers.js";
import { sendRequest } from "./request-tool.js";

// The up-front URL check (scheme, private/loopback/link-local addresses, `web.allowHosts`)
// is a policy, so a refused URL is a rejection before approval is asked. guardedFetch
// checks again at connect time, pins the checked addresses and re-checks every redirect.
const guardUrl = urlPolicy("url");

/** web.*: read pages as Markdown and call HTTP APIs, behind the network guard. */
export const capability = defineCapability({
  manifest,
  handlers: {
    fetch: fetchPage,
    request: sendRequest,
  },
  policies: {
    fetch: guardUrl,
    request: async (args, ctx) => {
      // The schema has made every value a string; FromSchema types open maps as unknown.
      checkRequestHeaders(args.headers as Record<string, string> | undefined);
      return guardUrl(args, ctx);
    },
  },
});
