//! Plain HTTP upstream to an Open Inference Protocol v2 server.
