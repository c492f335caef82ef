// The official Node SDK (openai), on chat completions and on the Responses API (the variants in argv: "chat",
// "responses"): a stream, a tool round trip and a structured output (the SDK's parse with a zod schema), for each
// target offering.
const OpenAI = require("openai");
const { zodResponseFormat, zodTextFormat } = require("openai/helpers/zod");
const { z } = require("zod");
const { TARGETS, TOOL_PROMPT, STRUCTURED_PROMPT, TOOL_RESULT } = require("./common.cjs");

const client = new OpenAI({ baseURL: process.env.BASE_URL + "/v1", apiKey: process.env.KEY, maxRetries: 0 });
const weatherTool = {
  type: "function",
  function: { name: "get_weather", description: "The current weather in a city",
              parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const Weather = z.object({ city: z.string(), temperature_c: z.number().int(), sunny: z.boolean(),
                           wind: z.enum(["calm", "breeze", "storm"]), tags: z.array(z.string()) });

async function stream(target) {
  const chunks = await client.chat.completions.create({
    model: target.model, provider: target.provider, messages: [{ role: "user", content: "Tell me about routing." }],
    max_tokens: 128, stream: true, stream_options: { include_usage: true },
  });
  const texts = []; let usage = null;
  for await (const chunk of chunks) {
    const piece = chunk.choices[0]?.delta?.content;
    if (piece) texts.push(piece);
    if (chunk.usage) usage = chunk.usage;
  }
  return { chunks: texts.length, text: texts.join(""), input_tokens: usage?.prompt_tokens, output_tokens: usage?.completion_tokens };
}

async function tools(target) {
  const messages = [{ role: "user", content: TOOL_PROMPT }];
  const first = await client.chat.completions.create({ model: target.model, provider: target.provider, messages, tools: [weatherTool], max_tokens: 256 });
  const call = first.choices[0].message.tool_calls[0];
  messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: TOOL_RESULT });
  const second = await client.chat.completions.create({ model: target.model, provider: target.provider, messages, tools: [weatherTool], max_tokens: 256 });
  return { tool: call.function.name, arguments: JSON.parse(call.function.arguments), first_finish: first.choices[0].finish_reason,
           answer: second.choices[0].message.content, finish: second.choices[0].finish_reason };
}

async function structured(target) {
  const answer = await client.chat.completions.parse({
    model: target.model, provider: target.provider, messages: [{ role: "user", content: STRUCTURED_PROMPT }],
    response_format: zodResponseFormat(Weather, "weather"), max_tokens: 512,
  });
  return { parsed: answer.choices[0].message.parsed, valid: Weather.safeParse(answer.choices[0].message.parsed).success };
}

const responsesTool = { type: "function", name: "get_weather", description: "The current weather in a city",
                        parameters: weatherTool.function.parameters, strict: false };

async function responsesStream(target) {
  const events = await client.responses.create({
    model: target.model, provider: target.provider, input: "Tell me about routing.", max_output_tokens: 128, stream: true,
  });
  const texts = []; let usage = null;
  for await (const event of events) {
    if (event.type === "response.output_text.delta" && event.delta) texts.push(event.delta);
    if (event.type === "response.completed" || event.type === "response.incomplete") usage = event.response.usage;
  }
  return { chunks: texts.length, text: texts.join(""), input_tokens: usage?.input_tokens, output_tokens: usage?.output_tokens };
}

async function responsesTools(target) {
  const input = [{ role: "user", content: TOOL_PROMPT }];
  const first = await client.responses.create({ model: target.model, provider: target.provider, input, tools: [responsesTool], max_output_tokens: 256 });
  const call = first.output.find((item) => item.type === "function_call");
  input.push(...first.output, { type: "function_call_output", call_id: call.call_id, output: TOOL_RESULT });
  const second = await client.responses.create({ model: target.model, provider: target.provider, input, tools: [responsesTool], max_output_tokens: 256 });
  return { tool: call.name, arguments: JSON.parse(call.arguments), first_finish: call ? "tool_calls" : first.status,
           answer: second.output_text, finish: second.status === "completed" ? "stop" : second.status };
}

async function responsesStructured(target) {
  const answer = await client.responses.parse({
    model: target.model, provider: target.provider, input: STRUCTURED_PROMPT,
    text: { format: zodTextFormat(Weather, "weather") }, max_output_tokens: 512,
  });
  return { parsed: answer.output_parsed, valid: Weather.safeParse(answer.output_parsed).success };
}

require("./common.cjs").run((api) => api === "responses"
  ? { stream: responsesStream, tools: responsesTools, structured: responsesStructured }
  : { stream, tools, structured });
