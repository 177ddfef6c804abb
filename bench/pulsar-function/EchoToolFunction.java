package toolwire.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Function;

/**
 * The benchmark's echo tool written as a Pulsar Function, as a Pulsar user would write one
 * tool: it takes a TrustGraph tool request ({"config":"{}","arguments":"{\"text\":...}"}) and
 * answers {"error":null,"response":text,"end_of_stream":true} on the response topic (user
 * config "response-topic") with the request's "id" property, the shape toolwire's builtin echo
 * answers. It returns the send's future: the runtime then runs up to its pending-async limit
 * at once (as the worker runs K requests) and acks each request once its answer is sent.
 */
public class EchoToolFunction implements Function<byte[], CompletableFuture<Void>> {
  private static final ObjectMapper JSON = new ObjectMapper();
  private String responseTopic;

  @Override
  public void initialize(Context context) {
    responseTopic = (String) context.getUserConfigValue("response-topic")
        .orElseThrow(() -> new IllegalArgumentException("user config response-topic is required"));
  }

  @Override
  public CompletableFuture<Void> process(byte[] input, Context context) throws Exception {
    String id = context.getCurrentRecord().getProperties().getOrDefault("id", "unknown");
    ObjectNode answer = JSON.createObjectNode();
    try {
      JsonNode request = JSON.readTree(input);
      JsonNode args = request.path("arguments");
      // TrustGraph sends the arguments as a JSON text; an object is taken too.
      if (args.isTextual()) args = JSON.readTree(args.asText());
      JsonNode text = args.path("text");
      answer.putNull("error");
      answer.put("response", text.isTextual() ? text.asText() : JSON.writeValueAsString(args));
    } catch (Exception e) {
      ObjectNode error = answer.putObject("error");
      error.put("type", "invalid-request");
      error.put("message", "the request is not a tool request");
      answer.put("response", "");
    }
    answer.put("end_of_stream", true);
    return context.newOutputMessage(responseTopic, Schema.BYTES)
        .property("id", id)
        .value(JSON.writeValueAsBytes(answer))
        .sendAsync()
        .thenApply(messageId -> null);
  }
}
