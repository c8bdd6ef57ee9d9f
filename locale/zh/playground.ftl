# 聊天试验场。

playground-title = 试验场
playground-intro = 以您自己的身份和继承的优先级向模型发送对话，并可随时停止。
playground-model = 模型
playground-message = 消息
playground-send = 发送
playground-stop = 停止
