import { render } from "./lib/view.js";

// TODO: read the port from the config
const port = 8080;
render(port);
