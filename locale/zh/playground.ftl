# 对话试验场。

playground-title = 试验场
playground-intro = 以您自己的身份和继承的优先级向模型发送对话，并可随时停止。
playground-model = 模型
playground-message = 消息
playground-send = 发送
playground-stop = 停止
playground-conversation = 对话
playground-clear = 新对话
playground-empty = 尚未发送任何内容。请选择模型、输入消息，然后点击“发送”。
playground-message-hint = 按 Ctrl+Enter 发送。
playground-no-models = 您没有可用的模型。
playground-no-models-option = 没有模型
playground-empty-message = 请先输入消息。
playground-you = 您
playground-assistant = 模型
playground-runs-at = 您的请求以“{ $priority }”优先级运行。
playground-one-class = 请求优先级已关闭：所有请求同属一个类别。
playground-waiting = 正在等待空闲的模型服务器…
playground-streaming = 正在回答…
playground-done = 回答已完成。
playground-stopped = 已停止。
playground-stopped-before = 在回答开始前已停止。
playground-stopped-partial = 已停止；回答不完整。
playground-cut-short = 回答被中断。
playground-ran-at = 此回答以“{ $priority }”优先级运行。
playground-answered-by = 由 { $backend } 回答，排队 { $wait } 秒（共 { $seconds } 秒）。
