// The Vercel AI SDK through its providers (the variants in argv: "responses" and "chat" of @ai-sdk/openai, "messages"
// of @ai-sdk/anthropic): streamText, a generateText tool round trip (the SDK runs the tool and sends its result back),
// generateObject with a zod schema; for each target offering.
const { streamText, generateText, generateObject, tool, stepCountIs } = require("ai");
const { createOpenAI } = require("@ai-sdk/openai");
const { createAnthropic } = require("@ai-sdk/anthropic");
const { z } = require("zod");
const { TOOL_PROMPT, STRUCTURED_PROMPT, TOOL_RESULT, pinnedFetch, run } = require("./common.cjs");

function model(api, target) {
  const options = { apiKey: process.env.KEY, fetch: pinnedFetch(target.provider) };
  if (api === "messages") return createAnthropic({ ...options, baseURL: process.env.BASE_URL + "/v1" })(target.model);
  const openai = createOpenAI({ ...options, baseURL: process.env.BASE_URL + "/v1" });
  return api === "chat" ? openai.chat(target.model) : openai.responses(target.model);
}
const Weather = z.object({ city: z.string(), temperature_c: z.number().int(), sunny: z.boolean(),
                           wind: z.enum(["calm", "breeze", "storm"]), tags: z.array(z.string()) });

const stream = (api) => async (target) => {
  const result = streamText({ model: model(api, target), prompt: "Tell me about routing.", maxOutputTokens: 128, maxRetries: 0 });
  const texts = [];
  for await (const piece of result.textStream) if (piece) texts.push(piece);
  const usage = await result.usage;
  return { chunks: texts.length, text: texts.join(""), input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
};

const tools = (api) => async (target) => {
  const calls = [];
  const result = await generateText({
    model: model(api, target), prompt: TOOL_PROMPT, maxOutputTokens: 256, maxRetries: 0, stopWhen: stepCountIs(3),
    tools: { get_weather: tool({ description: "The current weather in a city", inputSchema: z.object({ city: z.string() }),
                                 execute: async (input) => { calls.push(input); return TOOL_RESULT; } }) },
  });
  const first = result.steps[0];
  return { tool: first.toolCalls[0]?.toolName, arguments: calls[0], first_finish: first.finishReason, steps: result.steps.length,
           answer: result.text, finish: result.finishReason };
};

const structured = (api) => async (target) => {
  const result = await generateObject({ model: model(api, target), schema: Weather, schemaName: "weather",
                                        prompt: STRUCTURED_PROMPT, maxOutputTokens: 512, maxRetries: 0 });
  return { parsed: result.object, valid: Weather.safeParse(result.object).success };
};

run((api) => ({ stream: stream(api), tools: tools(api), structured: structured(api) }));
