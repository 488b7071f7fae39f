-- why: forecast tools in chat (issue 12): a use case may let the assistant consult the chat user's own
-- jobs; the tool calls and results of a reply are kept with its assistant sentence (JSON text).
alter table usecases add column model_tools boolean not null default false;
alter table chat_sentences add column tool_calls jsonb;
