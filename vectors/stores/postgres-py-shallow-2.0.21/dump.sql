--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: checkpoint_blobs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_blobs (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    channel text NOT NULL,
    type text NOT NULL,
    blob bytea
);


--
-- Name: checkpoint_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_migrations (
    v integer NOT NULL
);


--
-- Name: checkpoint_writes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoint_writes (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    checkpoint_id text NOT NULL,
    task_id text NOT NULL,
    idx integer NOT NULL,
    channel text NOT NULL,
    type text,
    blob bytea NOT NULL,
    task_path text DEFAULT ''::text NOT NULL
);


--
-- Name: checkpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.checkpoints (
    thread_id text NOT NULL,
    checkpoint_ns text DEFAULT ''::text NOT NULL,
    type text,
    checkpoint jsonb NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL
);


--
-- Data for Name: checkpoint_blobs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', '__start__', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'branch:to:after', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', '__start__', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'when', 'msgpack', '\xc7430394a86461746574696d65a86461746574696d65d920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030ad66726f6d69736f666f726d6174');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'branch:to:tools', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'steps', 'msgpack', '\x02');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'branch:to:agent', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-main', 'after:073eb45d-1afc-bdab-a392-83e612d415b8', '__start__', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-main', 'after:073eb45d-1afc-bdab-a392-83e612d415b8', 'messages', 'msgpack', '\x95c7a20594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b15765617468657220696e2050617269733fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec7f10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6ec7ba0594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74a573756e6e79b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65c0a26964a6746f6f6c2d31ac746f6f6c5f63616c6c5f6964a663616c6c2d31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6ec7ce0594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b549742069732073756e6e7920696e2050617269732eb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a461692d32a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6ec7d10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b7286e6f7465642062792074686520737562677261706829b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a57375622d31a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('t-main', 'after:073eb45d-1afc-bdab-a392-83e612d415b8', 'branch:to:note', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-main', '', 'messages', 'msgpack', '\x95c7a20594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b15765617468657220696e2050617269733fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec7f10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6ec7ba0594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74a573756e6e79b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65c0a26964a6746f6f6c2d31ac746f6f6c5f63616c6c5f6964a663616c6c2d31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6ec7ce0594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b549742069732073756e6e7920696e2050617269732eb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a461692d32a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6ec7d10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b7286e6f7465642062792074686520737562677261706829b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a57375622d31a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'messages', 'msgpack', '\x92c7a20594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b15765617468657220696e2050617269733fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec7f10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'steps', 'msgpack', '\x01');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'branch:to:agent', 'empty', NULL);
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'when', 'msgpack', '\xc7430394a86461746574696d65a86461746574696d65d920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030ad66726f6d69736f666f726d6174');
INSERT INTO public.checkpoint_blobs VALUES ('t-short', '', 'branch:to:tools', 'null', '\x');


--
-- Data for Name: checkpoint_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_migrations VALUES (0);
INSERT INTO public.checkpoint_migrations VALUES (1);
INSERT INTO public.checkpoint_migrations VALUES (2);
INSERT INTO public.checkpoint_migrations VALUES (3);
INSERT INTO public.checkpoint_migrations VALUES (4);
INSERT INTO public.checkpoint_migrations VALUES (5);
INSERT INTO public.checkpoint_migrations VALUES (6);
INSERT INTO public.checkpoint_migrations VALUES (7);


--
-- Data for Name: checkpoint_writes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoint_writes VALUES ('t-main', 'after:073eb45d-1afc-bdab-a392-83e612d415b8', '1f1eaf26-0fa8-6fa4-8000-eb2a1336be62', '95942a03-2667-b1c6-c14e-ec1e41cf8a7f', 0, 'messages', 'msgpack', '\x91c7d10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b7286e6f7465642062792074686520737562677261706829b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a57375622d31a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, note');
INSERT INTO public.checkpoint_writes VALUES ('t-main', '', '1f1eaf26-0f9a-671d-8003-f825fd758a84', '073eb45d-1afc-bdab-a392-83e612d415b8', 0, 'messages', 'msgpack', '\x95c7a20594bd6c616e67636861696e5f636f72652e6d657373616765732e68756d616eac48756d616e4d65737361676587a7636f6e74656e74b15765617468657220696e2050617269733fb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a3682d31a76578616d706c65c2b36d6f64656c5f76616c69646174655f6a736f6ec7f10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6ec7ba0594bc6c616e67636861696e5f636f72652e6d657373616765732e746f6f6cab546f6f6c4d65737361676589a7636f6e74656e74a573756e6e79b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d65c0a26964a6746f6f6c2d31ac746f6f6c5f63616c6c5f6964a663616c6c2d31a86172746966616374c0a6737461747573a773756363657373b36d6f64656c5f76616c69646174655f6a736f6ec7ce0594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b549742069732073756e6e7920696e2050617269732eb16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a461692d32a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6ec7d10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74b7286e6f7465642062792074686520737562677261706829b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a57375622d31a76578616d706c65c2aa746f6f6c5f63616c6c7390b2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, after');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1eaf26-0fca-6274-8000-9817db347511', 'daa7b37a-2500-700a-d82a-95b74c9771fe', 0, 'messages', 'msgpack', '\x91c7f10594ba6c616e67636861696e5f636f72652e6d657373616765732e6169a941494d6573736167658aa7636f6e74656e74a0b16164646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a26169a46e616d65c0a26964a461692d31a76578616d706c65c2aa746f6f6c5f63616c6c739184a46e616d65a777656174686572a46172677381a463697479a55061726973a26964a663616c6c2d31a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c5f63616c6c7390ae75736167655f6d65746164617461c0b36d6f64656c5f76616c69646174655f6a736f6e', '~__pregel_pull, agent');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1eaf26-0fca-6274-8000-9817db347511', 'daa7b37a-2500-700a-d82a-95b74c9771fe', 1, 'when', 'msgpack', '\xc7430394a86461746574696d65a86461746574696d65d920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030ad66726f6d69736f666f726d6174', '~__pregel_pull, agent');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1eaf26-0fca-6274-8000-9817db347511', 'daa7b37a-2500-700a-d82a-95b74c9771fe', 2, 'steps', 'msgpack', '\x01', '~__pregel_pull, agent');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1eaf26-0fca-6274-8000-9817db347511', 'daa7b37a-2500-700a-d82a-95b74c9771fe', 3, 'branch:to:tools', 'null', '\x', '~__pregel_pull, agent');
INSERT INTO public.checkpoint_writes VALUES ('t-short', '', '1f1eaf26-0fcd-6636-8001-812fbe2fbaaa', 'd99fdf37-ee4b-b218-e086-18d34f8aa7e3', -3, '__interrupt__', 'msgpack', '\x91c7cf0293af6c616e6767726170682e7479706573a9496e7465727275707484a576616c756582a87175657374696f6eac72756e20776561746865723fa861736b65645f6174c7430394a86461746574696d65a86461746574696d65d920323032342d30372d30315431323a33303a34352e3132333435362b30303a3030ad66726f6d69736f666f726d6174a9726573756d61626c65c3a26e7391d92a746f6f6c733a64393966646633372d656534622d623231382d653038362d313864333466386161376533a47768656ea6647572696e67', '~__pregel_pull, tools');


--
-- Data for Name: checkpoints; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.checkpoints VALUES ('t-main', '', NULL, '{"v": 3, "id": "1f1eaf26-0fbe-6b1a-8004-a6ab43b7ab7e", "ts": "2026-11-28T06:10:15.530343+00:00", "pending_sends": [], "versions_seen": {"after": {"branch:to:after": "00000000000000000000000000000005.0.3369021228629516"}, "agent": {"branch:to:agent": "00000000000000000000000000000004.0.4237975894900474"}, "tools": {"branch:to:tools": "00000000000000000000000000000003.0.8031250070850783"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.8452774128988821"}, "__interrupt__": {"when": "00000000000000000000000000000003.0.6382287804063815", "steps": "00000000000000000000000000000003.0.14721568240747374", "messages": "00000000000000000000000000000003.0.6328327266375007", "__start__": "00000000000000000000000000000002.0.8795842991556445", "branch:to:agent": "00000000000000000000000000000003.0.5168998465748386", "branch:to:tools": "00000000000000000000000000000003.0.8031250070850783"}}, "channel_versions": {"when": "00000000000000000000000000000003.0.6382287804063815", "steps": "00000000000000000000000000000005.0.24773510010766375", "messages": "00000000000000000000000000000006.0.3878395731184783", "__start__": "00000000000000000000000000000002.0.8795842991556445", "branch:to:after": "00000000000000000000000000000006.0.031466758783291526", "branch:to:agent": "00000000000000000000000000000005.0.894533219664988", "branch:to:tools": "00000000000000000000000000000004.0.6306260789836051"}}', '{"step": 4, "user": "ada", "source": "loop", "writes": {"after": {"messages": [{"id": ["langchain", "schema", "messages", "HumanMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "h-1", "type": "human", "content": "Weather in Paris?"}}, {"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "ai-1", "type": "ai", "content": "", "tool_calls": [{"id": "call-1", "args": {"city": "Paris"}, "name": "weather", "type": "tool_call"}], "invalid_tool_calls": []}}, {"id": ["langchain", "schema", "messages", "ToolMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "tool-1", "type": "tool", "status": "success", "content": "sunny", "tool_call_id": "call-1"}}, {"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "ai-2", "type": "ai", "content": "It is sunny in Paris.", "tool_calls": [], "invalid_tool_calls": []}}, {"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "sub-1", "type": "ai", "content": "(noted by the subgraph)", "tool_calls": [], "invalid_tool_calls": []}}]}}, "parents": {}, "thread_id": "t-main"}');
INSERT INTO public.checkpoints VALUES ('t-main', 'after:073eb45d-1afc-bdab-a392-83e612d415b8', NULL, '{"v": 3, "id": "1f1eaf26-0fb5-60f1-8001-d405456b9969", "ts": "2026-11-28T06:10:15.526406+00:00", "pending_sends": [], "versions_seen": {"note": {"branch:to:note": "00000000000000000000000000000002.0.5267182387633957"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.015657512640935956"}}, "channel_versions": {"messages": "00000000000000000000000000000003.0.5831856753231213", "__start__": "00000000000000000000000000000002.0.7636231513067996", "branch:to:note": "00000000000000000000000000000003.0.18332814236505623"}}', '{"step": 1, "user": "ada", "source": "loop", "writes": {"note": {"messages": [{"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "sub-1", "type": "ai", "content": "(noted by the subgraph)", "tool_calls": [], "invalid_tool_calls": []}}]}}, "parents": {"": "1f1eaf26-0f9a-671d-8003-f825fd758a84"}, "thread_id": "t-main", "langgraph_node": "after", "langgraph_path": ["__pregel_pull", "after"], "langgraph_step": 4, "langgraph_triggers": ["branch:to:after"], "langgraph_checkpoint_ns": "after:073eb45d-1afc-bdab-a392-83e612d415b8"}');
INSERT INTO public.checkpoints VALUES ('t-short', '', NULL, '{"v": 3, "id": "1f1eaf26-0fcd-6636-8001-812fbe2fbaaa", "ts": "2026-11-28T06:10:15.536378+00:00", "pending_sends": [], "versions_seen": {"agent": {"branch:to:agent": "00000000000000000000000000000002.0.3113736813946829"}, "__input__": {}, "__start__": {"__start__": "00000000000000000000000000000001.0.8460700502528007"}}, "channel_versions": {"when": "00000000000000000000000000000003.0.5453747478171299", "steps": "00000000000000000000000000000003.0.7837873500715603", "messages": "00000000000000000000000000000003.0.5152146413933206", "__start__": "00000000000000000000000000000002.0.35183325600031723", "branch:to:agent": "00000000000000000000000000000003.0.8769717885099305", "branch:to:tools": "00000000000000000000000000000003.0.7695868522837683"}}', '{"step": 1, "user": "ada", "source": "loop", "writes": {"agent": {"when": {"id": ["datetime", "datetime"], "lc": 2, "args": ["2024-07-01T12:30:45.123456+00:00"], "type": "constructor", "method": "fromisoformat"}, "steps": 1, "messages": [{"id": ["langchain", "schema", "messages", "AIMessage"], "lc": 1, "type": "constructor", "kwargs": {"id": "ai-1", "type": "ai", "content": "", "tool_calls": [{"id": "call-1", "args": {"city": "Paris"}, "name": "weather", "type": "tool_call"}], "invalid_tool_calls": []}}]}}, "parents": {}, "thread_id": "t-short"}');


--
-- Name: checkpoint_blobs checkpoint_blobs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_blobs
    ADD CONSTRAINT checkpoint_blobs_pkey PRIMARY KEY (thread_id, checkpoint_ns, channel);


--
-- Name: checkpoint_migrations checkpoint_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_migrations
    ADD CONSTRAINT checkpoint_migrations_pkey PRIMARY KEY (v);


--
-- Name: checkpoint_writes checkpoint_writes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoint_writes
    ADD CONSTRAINT checkpoint_writes_pkey PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx);


--
-- Name: checkpoints checkpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.checkpoints
    ADD CONSTRAINT checkpoints_pkey PRIMARY KEY (thread_id, checkpoint_ns);


--
-- Name: checkpoint_blobs_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoint_blobs_thread_id_idx ON public.checkpoint_blobs USING btree (thread_id);


--
-- Name: checkpoint_writes_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoint_writes_thread_id_idx ON public.checkpoint_writes USING btree (thread_id);


--
-- Name: checkpoints_thread_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX checkpoints_thread_id_idx ON public.checkpoints USING btree (thread_id);


--
-- PostgreSQL database dump complete
--


