package com.fasterxml.jackson.databind;

import com.fasterxml.jackson.core.JsonProcessingException;

// Compile-time stand-in for Jackson's ObjectMapper with upstream Jackson's
// signatures: Debian's jackson-databind declares writeValueAsString as throwing
// IOException, which Leaf's SnowflakeZookeeperHolder.buildData does not catch.
// Leaf is compiled against this and runs on Debian's real jar.
public class ObjectMapper {
    public String writeValueAsString(Object value) throws JsonProcessingException {
        throw new UnsupportedOperationException("compile-time stub");
    }

    public <T> T readValue(String content, Class<T> valueType) throws JsonProcessingException {
        throw new UnsupportedOperationException("compile-time stub");
    }
}
