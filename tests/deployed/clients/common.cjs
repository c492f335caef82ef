// What every Node client script shares: the target offerings, the prompts, and the runner that prints one JSON
// object per variant so the test reports every failing case at once.
const TARGETS = JSON.parse(process.env.TARGETS);
const TOOL_PROMPT = process.env.TOOL_PROMPT;
const STRUCTURED_PROMPT = process.env.STRUCTURED_PROMPT;
const TOOL_RESULT = process.env.TOOL_RESULT;

// The gateway's provider preference, added to every JSON body the SDK sends: pins the offering (its dialect).
function pinnedFetch(preference) {
  return async (url, init) => {
    if (init && typeof init.body === "string") {
      init = { ...init, body: JSON.stringify({ ...JSON.parse(init.body), provider: preference }) };
    }
    return fetch(url, init);
  };
}

// argv: the variants to run (an SDK's providers), each through casesFor(variant); printed as
// {variant: {target label: {case: result or {error}}}}.
async function run(casesFor) {
  const out = {};
  for (const variant of process.argv.slice(2)) {
    out[variant] = {};
    for (const target of TARGETS) {
      const results = (out[variant][target.label] = {});
      for (const [name, fn] of Object.entries(casesFor(variant))) {
        try {
          results[name] = await fn(target);
        } catch (error) {
          results[name] = { error: String((error && error.stack) || error).slice(0, 1500) };
        }
      }
    }
  }
  console.log(JSON.stringify(out));
}

module.exports = { TARGETS, TOOL_PROMPT, STRUCTURED_PROMPT, TOOL_RESULT, pinnedFetch, run };
